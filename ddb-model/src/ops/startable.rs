//! `startable!`: the [`Startable`](super::Startable) impl and the `impl Future` of a builder,
//! written once for the builders that start by sending their settings.

/// Implements [`Startable`](super::Startable) for a builder with a `running` field, and its
/// `impl Future` ([`builder_future!`](super::builder_future)). `emptied` makes the builder
/// left behind when the settings are moved out (it is never sent: polling takes `running`
/// before it moves them), `start` is the method that sends (`send` or `all`). Given as a
/// closure instead, `start` sends the builder `b`, and the builder's futures are written with
/// `builder_future!` (one per output type). A leading `writes` marks a builder that writes
/// (its dry run sends the reads its writes depend on).
macro_rules! startable {
    (writes $($rest:tt)*) => {
        $crate::ops::startable::startable!(@ true; $($rest)*);
    };
    (@ $w:literal; [$($g:tt)*] $ty:ty => $raw:ty, |$this:ident| $emptied:expr, $start:ident) => {
        $crate::ops::startable::startable!(
            @ $w; [$($g)*] $ty => $raw, |$this| $emptied, |b| b.$start()
        );
        $crate::ops::builder_future!([$($g)*] $ty => $raw, |r| r);
    };
    (@ $w:literal; [$($g:tt)*] $ty:ty => $raw:ty, |$this:ident| $emptied:expr, |$b:ident| $start:expr) => {
        impl<$($g)*> $crate::ops::Startable<'a> for $ty {
            type Raw = $raw;
            const DRY_SENDS_READS: bool = $w;
            fn running(&mut self) -> &mut $crate::ops::Running<'a, $raw> {
                &mut self.running
            }
            fn take_settings(&mut self) -> Self {
                let $this = &*self;
                let emptied = $emptied;
                std::mem::replace(self, emptied)
            }
            fn start(self) -> $crate::ops::BoxFuture<'a, $raw> {
                let $b = self;
                $crate::ops::boxed(|| $start)
            }
        }
    };
    ($($rest:tt)*) => {
        $crate::ops::startable::startable!(@ false; $($rest)*);
    };
}
pub(crate) use startable;
