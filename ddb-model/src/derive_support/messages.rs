//! Messages of the compile-time checks, built during constant evaluation.

use crate::Entity;

/// A message built during constant evaluation (a `panic!` in a `const` item can only print
/// text it is given whole).
pub struct ConstMsg {
    buf: [u8; ConstMsg::CAPACITY],
    len: usize,
}

impl ConstMsg {
    const CAPACITY: usize = 1024;
    const EMPTY: ConstMsg = ConstMsg { buf: [0; ConstMsg::CAPACITY], len: 0 };

    /// Appends `text`, or as much of it as fits, cut at a character boundary.
    const fn push(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut n = bytes.len();
        if n > Self::CAPACITY - self.len {
            n = Self::CAPACITY - self.len;
            while n > 0 && (bytes[n] & 0b1100_0000) == 0b1000_0000 {
                n -= 1;
            }
        }
        let mut i = 0;
        while i < n {
            self.buf[self.len + i] = bytes[i];
            i += 1;
        }
        self.len += n;
        self
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        match std::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

/// The compile-time error for field `field`, stored as attribute `attr`, when the table of
/// `E` (`table`, as the message names it) uses that attribute itself; no message otherwise.
pub const fn attr_clash<E: Entity>(field: &str, attr: &str, table: &str) -> Option<ConstMsg> {
    let (before, after) = match crate::__private::table_attr_role::<E>(attr) {
        1 => ("the partition key attribute of ", ""),
        2 => ("the sort key attribute of ", ""),
        3 => ("where ", " stores each item's entity type"),
        4 => ("a key attribute of an index of ", ""),
        _ => return None,
    };
    let message = ConstMsg::EMPTY
        .push("field `")
        .push(field)
        .push("` is stored as attribute `")
        .push(attr)
        .push("`, which is ")
        .push(before)
        .push(table)
        .push(after)
        .push("; give the field another attribute name with #[serde(rename = \"...\")]");
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(ConstMsg::CAPACITY);
        let msg = ConstMsg::EMPTY.push("a").push(&long);
        let text = msg.as_str();
        assert!(text.len() <= ConstMsg::CAPACITY && text.len() > ConstMsg::CAPACITY - 2);
        assert!(ConstMsg::EMPTY.as_str().is_empty());
    }
}
