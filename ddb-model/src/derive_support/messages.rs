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

/// The compile-time error for placeholder `<placeholder>` of key type `T` (`ty`, as the
/// template's field is written) directly followed by a literal that starts with `next`
/// (`next_text`, the same character as text), when `T`'s escaped key text may hold it: the
/// value's end could not be found. No message when it may not.
pub const fn follow_check<T: crate::key::KeyPart>(
    placeholder: &str,
    ty: &str,
    next: char,
    next_text: &str,
) -> Option<ConstMsg> {
    let chars = T::KEY_CHARS;
    if chars.may_follow(next) {
        return None;
    }
    let message = ConstMsg::EMPTY
        .push("placeholder `<")
        .push(placeholder)
        .push(">` is followed by `")
        .push(next_text)
        .push("`, which a key text of `")
        .push(ty)
        .push("` can hold, so the value's end could not be found: start the text after it with a separator (one of # / | ~ :)");
    let message = match chars {
        crate::key::KeyChars::Any => {
            message.push("; a `").push(ty).push("` key text may hold any other character")
        }
        crate::key::KeyChars::Only(set) => message
            .push(" or with any character a `")
            .push(ty)
            .push("` key text never holds, that is any but `")
            .push(set)
            .push("`"),
    };
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

    #[test]
    fn follow_checks_name_the_accepted_literals() {
        assert!(follow_check::<u32>("n", "u32", 'x', "x").is_none());
        assert!(follow_check::<String>("id", "String", '#', "#").is_none());
        let msg = follow_check::<u32>("n", "u32", '7', "7").map(|m| m.as_str().to_owned());
        assert!(msg.is_some_and(|m| m.contains("any but `0123456789`")));
        let msg = follow_check::<String>("id", "String", '-', "-").map(|m| m.as_str().to_owned());
        assert!(msg.is_some_and(|m| m.contains("may hold any other character")));
    }
}
