//! Opaque, URL-safe page cursors bound to the query that made them.
//!
//! A cursor holds the key of the last item a page read (DynamoDB's `LastEvaluatedKey`) and a
//! checksum over that key and a fingerprint of the query (table, index, partition, sort-key
//! condition, filter, output type, order). Reading a cursor checks, in this order: its
//! encoding, its checksum against the query it is used with, and that its key lies inside the
//! query's partition and sort-key condition. So a cursor of another query, partition or
//! entity type, or an edited one, is [`Error::InvalidCursor`] and never reads other items.
//!
//! Cursors are not encrypted: like `LastEvaluatedKey`, they reveal the key of an item of the
//! page. Encrypt them in the application if keys are secret.

use std::fmt;
use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::error::{CursorReason as Why, Error};
use crate::item::Item;

const VERSION: u8 = 1;

/// Where the next page of a query starts. Get one from [`Page::next`](super::Page::next),
/// hand it to a client as text ([`as_str`](Cursor::as_str) / `Display`), and read it back
/// with [`Cursor::parse`] or `str::parse`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cursor(String);

impl Cursor {
    /// Reads a cursor from its text ([`Error::InvalidCursor`] if it is not one). Only the
    /// encoding is checked here; whether it belongs to a query is checked when a page is
    /// read with it. `text.parse::<Cursor>()` does the same.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Cursor, Entity, Error, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann".
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq }.put(&db).await?;
    /// # }
    /// let page = Order::query(&db, "ann").limit(2).page(None).await?;
    /// let cursor = page.next.expect("more orders");
    /// // Safe in a URL as it is: `as_str` and `Display` give the same text.
    /// let safe = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    /// assert!(cursor.as_str().bytes().all(safe));
    /// let text = cursor.to_string(); // to the client, and back
    /// assert_eq!(text, cursor.as_str());
    /// let cursor = Cursor::parse(&text)?;
    /// assert_eq!(text.parse::<Cursor>()?, cursor);
    /// let page = Order::query(&db, "ann").limit(2).page(Some(&cursor)).await?;
    /// assert_eq!(page.items[0].seq, 2);
    ///
    /// assert!(matches!(Cursor::parse("not a cursor"), Err(Error::InvalidCursor { .. })));
    /// // A cursor of another query (here: another order) is rejected when used.
    /// let reversed = Order::query(&db, "ann").reverse().page(Some(&cursor)).await;
    /// assert!(matches!(reversed, Err(Error::InvalidCursor { .. })));
    /// # Ok(()) }
    /// ```
    pub fn parse(text: &str) -> Result<Cursor, Error> {
        decode_base64(text)
            .filter(|bytes| bytes.first() == Some(&VERSION))
            .ok_or_else(|| invalid(Why::NotACursor))?;
        Ok(Cursor(text.to_owned()))
    }

    /// The cursor as URL-safe text (`A-Z a-z 0-9 - _`), also its `Display` form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Encodes `key` for a query of fingerprint `binding`.
    pub(crate) fn encode(binding: u64, key: &Item) -> Result<Cursor, Error> {
        let mut payload = Vec::new();
        let mut attrs: Vec<_> = key.iter().collect();
        attrs.sort_by(|a, b| a.0.cmp(b.0));
        for (name, value) in attrs {
            let (tag, bytes): (u8, &[u8]) = match value {
                AttributeValue::S(s) => (b'S', s.as_bytes()),
                AttributeValue::N(n) => (b'N', n.as_bytes()),
                AttributeValue::B(b) => (b'B', b.as_ref()),
                _ => return Err(invalid(Why::KeyAttribute)),
            };
            push_bytes(&mut payload, name.as_bytes())?;
            payload.push(tag);
            push_bytes(&mut payload, bytes)?;
        }
        let mut bytes = Vec::with_capacity(payload.len() + 9);
        bytes.push(VERSION);
        bytes.extend_from_slice(&checksum(binding, &payload).to_be_bytes());
        bytes.extend_from_slice(&payload);
        Ok(Cursor(encode_base64(&bytes)))
    }

    /// The key of the cursor, if it was made by a query of fingerprint `binding`.
    pub(crate) fn decode(&self, binding: u64) -> Result<Item, Error> {
        let bytes = decode_base64(&self.0).ok_or_else(|| invalid(Why::NotACursor))?;
        let (header, payload) = bytes.split_at_checked(9).ok_or_else(|| invalid(Why::Malformed))?;
        if header[0] != VERSION {
            return Err(invalid(Why::UnknownVersion));
        }
        let mut sum = [0u8; 8];
        sum.copy_from_slice(&header[1..9]);
        if u64::from_be_bytes(sum) != checksum(binding, payload) {
            return Err(invalid(Why::OtherQuery));
        }
        read_key(payload)
    }

    /// The start key the cursor holds, whatever query it is of; `None` for a text that is
    /// not a cursor (which [`decode`](Cursor::decode) then reports).
    pub(crate) fn start_key(&self) -> Option<Item> {
        let bytes = decode_base64(&self.0)?;
        let (header, payload) = bytes.split_at_checked(9)?;
        (header[0] == VERSION).then(|| read_key(payload).ok()).flatten()
    }
}

/// The key a cursor's payload holds.
fn read_key(payload: &[u8]) -> Result<Item, Error> {
    let mut item = Item::new();
    let mut rest = payload;
    while !rest.is_empty() {
        let name = take_bytes(&mut rest)?;
        let (&tag, tail) = rest.split_first().ok_or_else(|| invalid(Why::Malformed))?;
        rest = tail;
        let value = take_bytes(&mut rest)?;
        let name = String::from_utf8(name.to_vec()).map_err(|_| invalid(Why::Malformed))?;
        let text = || String::from_utf8(value.to_vec()).map_err(|_| invalid(Why::Malformed));
        let value = match tag {
            b'S' => AttributeValue::S(text()?),
            b'N' => AttributeValue::N(text()?),
            b'B' => AttributeValue::B(value.to_vec().into()),
            _ => return Err(invalid(Why::Malformed)),
        };
        item.insert(name, value);
    }
    Ok(item)
}

/// Writes the cursor's text, as [`Cursor::as_str`].
impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cursor").field(&self.0).finish()
    }
}

/// Reads a cursor from its text, as [`Cursor::parse`].
impl FromStr for Cursor {
    type Err = Error;
    fn from_str(s: &str) -> Result<Cursor, Error> {
        Cursor::parse(s)
    }
}

/// The cursor's text, as [`Cursor::as_str`].
impl AsRef<str> for Cursor {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

pub(crate) fn invalid(reason: Why) -> Error {
    Error::InvalidCursor { reason }
}

fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Error> {
    let len = u16::try_from(bytes.len()).map_err(|_| invalid(Why::KeyAttribute))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

fn take_bytes<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8], Error> {
    let (len, tail) = rest.split_at_checked(2).ok_or_else(|| invalid(Why::Malformed))?;
    let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let (bytes, tail) = tail.split_at_checked(len).ok_or_else(|| invalid(Why::Malformed))?;
    *rest = tail;
    Ok(bytes)
}

/// FNV-1a (64 bit): stable across processes and releases, unlike `std`'s hashers.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn bytes(mut self, bytes: &[u8]) -> Self {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    /// Adds a length-prefixed field, so that field boundaries count.
    pub(crate) fn field(self, bytes: &[u8]) -> Self {
        self.bytes(&(bytes.len() as u64).to_be_bytes()).bytes(bytes)
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

fn checksum(binding: u64, payload: &[u8]) -> u64 {
    Fnv::new().bytes(&binding.to_be_bytes()).field(payload).finish()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode_base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = ALPHABET.iter().position(|&a| a == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    // Canonical form only (unused low bits zero), so one cursor has one text.
    if encode_base64(&out) != text {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = encode_base64(&bytes);
            assert!(text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(decode_base64(&text), Some(bytes), "{text}");
        }
        assert_eq!(decode_base64("a"), None);
        assert_eq!(decode_base64("ab+c"), None);
    }

    #[test]
    fn cursors_are_bound_and_checked() {
        let mut key = Item::new();
        key.insert("pk".into(), AttributeValue::S("USER#a".into()));
        key.insert("sk".into(), AttributeValue::S("ORDER#1".into()));
        let cursor = Cursor::encode(7, &key).unwrap();
        assert_eq!(cursor.decode(7).unwrap(), key);
        assert!(matches!(cursor.decode(8), Err(Error::InvalidCursor { .. })));
        // Flip every character in turn: never accepted as the same query's cursor with
        // another key.
        let text = cursor.as_str().to_owned();
        for i in 0..text.len() {
            let mut bytes = text.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let edited = String::from_utf8(bytes).unwrap();
            if let Ok(c) = Cursor::parse(&edited) {
                match c.decode(7) {
                    Ok(k) => assert_eq!(k, key, "an edit changed the key unnoticed"),
                    Err(e) => assert!(matches!(e, Error::InvalidCursor { .. })),
                }
            }
        }
    }
}
