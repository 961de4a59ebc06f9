//! What binds a cursor to its query: a fingerprint of the prepared query, and the check
//! that a cursor's key lies inside the query.

use super::prepare::Prepared;
use super::*;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    pub(super) fn check_cursor(&self, p: &Prepared, cursor: &Cursor) -> Result<Item, Error> {
        if self.db.tenant_scope().is_some()
            && let Some(start) = cursor.start_key()
        {
            // A cursor of another tenant's query names that tenant's partition.
            let source = crate::ops::tenant::Source::Cursor;
            crate::ops::tenant::guard(self.db, source, p.pk_attr, start.get(p.pk_attr))?;
        }
        let key = cursor.decode(self.binding(p))?;
        let text = |attr: &str| crate::model::string_attr(&key, attr);
        let expected = &p.key_attrs;
        let mut present: Vec<&str> = key.keys().map(String::as_str).collect();
        present.sort_unstable();
        let cond =
            self.key.as_ref().map_err(|_| invalid(crate::error::CursorReason::InvalidQuery))?;
        let inside = present == *expected
            && match &cond.attrs {
                Some(attrs) => attrs.admits(&key),
                None => {
                    text(p.pk_attr) == Some(cond.pk.as_str())
                        && cond.admits(p.sk_attr.and_then(text))
                }
            };
        if inside { Ok(key) } else { Err(invalid(crate::error::CursorReason::OutsideQuery)) }
    }

    /// What a cursor of this query is bound to: a fingerprint of the table, index, key
    /// condition, output type, filter, projection, order and every name and value. Computed
    /// only where a cursor is made or checked, not for every query.
    pub(super) fn binding(&self, p: &Prepared) -> u64 {
        // `p` exists only for a valid key (`prepare` refuses the others).
        let Ok(key) = self.key.as_ref() else {
            return 0;
        };
        let mut fp = Fnv::new()
            .field(self.db.table_name().as_bytes())
            .field(p.index.unwrap_or("").as_bytes())
            .field(key.pk.as_bytes())
            .field(format!("{:?}", key.sk).as_bytes())
            .field(format!("{:?}", key.range).as_bytes())
            .field(format!("{:?}", key.attrs).as_bytes())
            .field(D::NAME.as_bytes())
            .field(p.filter_expr.as_deref().unwrap_or("").as_bytes())
            .field(p.projection.as_deref().unwrap_or("").as_bytes())
            .field(&[u8::from(self.reverse)]);
        if let Some(values) = &p.values {
            let mut sorted: Vec<_> = values.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (placeholder, value) in sorted {
                fp = fp.field(placeholder.as_bytes());
                fp = canonical(fp, value);
            }
        }
        let mut names_sorted: Vec<_> = p.names.iter().flatten().collect();
        names_sorted.sort();
        for (placeholder, name) in names_sorted {
            fp = fp.field(placeholder.as_bytes()).field(name.as_bytes());
        }
        fp.finish()
    }
}

/// Adds a canonical encoding of `v` to the fingerprint.
fn canonical(fp: Fnv, v: &AttributeValue) -> Fnv {
    match v {
        AttributeValue::S(s) => fp.field(b"S").field(s.as_bytes()),
        AttributeValue::N(n) => fp.field(b"N").field(n.as_bytes()),
        AttributeValue::B(b) => fp.field(b"B").field(b.as_ref()),
        AttributeValue::Bool(b) => fp.field(b"BOOL").field(&[u8::from(*b)]),
        AttributeValue::Null(_) => fp.field(b"NULL"),
        AttributeValue::Ss(v) | AttributeValue::Ns(v) => {
            v.iter().fold(fp.field(b"SET"), |fp, s| fp.field(s.as_bytes()))
        }
        AttributeValue::Bs(v) => v.iter().fold(fp.field(b"BS"), |fp, b| fp.field(b.as_ref())),
        AttributeValue::L(v) => v.iter().fold(fp.field(b"L"), canonical),
        AttributeValue::M(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            entries
                .into_iter()
                .fold(fp.field(b"M"), |fp, (k, v)| canonical(fp.field(k.as_bytes()), v))
        }
        _ => fp.field(b"?"),
    }
}
