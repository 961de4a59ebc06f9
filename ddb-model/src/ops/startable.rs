//! `startable!`: the [`Startable`](super::Startable) impl and the `impl Future` of a builder,
//! written once for the builders that start by sending their settings.

/// Implements [`Startable`](super::Startable) for a builder with a `running` field, and its
/// `impl Future` ([`builder_future!`](super::builder_future)). `emptied` makes the builder
/// left behind when the settings are moved out (it is never sent: polling takes `running`
/// before it moves them), `start` is the method that sends (`send` or `all`), and `map` (by
/// default the identity) maps its result to the builder's output.
macro_rules! startable {
    ([$($g:tt)*] $ty:ty => $raw:ty, |$this:ident| $emptied:expr, $start:ident) => {
        $crate::ops::startable::startable!(
            [$($g)*] $ty => $raw, |$this| $emptied, $start, $raw, |r| r
        );
    };
    (
        [$($g:tt)*] $ty:ty => $raw:ty, |$this:ident| $emptied:expr, $start:ident,
        $out:ty, $map:expr
    ) => {
        impl<$($g)*> $crate::ops::Startable<'a> for $ty {
            type Raw = $raw;
            fn running(&mut self) -> &mut $crate::ops::Running<'a, $raw> {
                &mut self.running
            }
            fn take_settings(&mut self) -> Self {
                let $this = &*self;
                let emptied = $emptied;
                std::mem::replace(self, emptied)
            }
            fn start(self) -> $crate::ops::BoxFuture<'a, $raw> {
                $crate::ops::boxed(|| self.$start())
            }
        }

        $crate::ops::builder_future!([$($g)*] $ty => $out, $map);
    };
}
pub(crate) use startable;
