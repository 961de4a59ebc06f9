//! The schema version (`schema = N, upgrade = path`): a version from 1, an upgrade function
//! exactly when there is an older version to upgrade from.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

/// The largest schema version: the runtime keeps versions in a `u32`.
const MAX_SCHEMA: u64 = u32::MAX as u64;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let version = entity.schema.as_ref().map(|lit| (lit, lit.base10_parse::<u64>()));
    match (version, &entity.upgrade) {
        (None, Some(upgrade)) => cx.error_spanned_by(
            upgrade,
            "`upgrade` without `schema`: an upgrade function brings items of older schema versions to the current one; declare the current version, as in #[entity(schema = 2, upgrade = upgrade_user)], or remove `upgrade`",
        ),
        (Some((lit, Ok(0))), _) => cx.error_spanned_by(
            lit,
            "schema versions start at 1 (items written before the entity declared a version are version 1): write `schema = 1`, or a later version with an upgrade function",
        ),
        (Some((lit, Ok(n))), _) if n > MAX_SCHEMA => cx.error_spanned_by(
            lit,
            format!("schema version {n} is too large: versions are at most {MAX_SCHEMA}"),
        ),
        (Some((lit, Ok(1))), Some(upgrade)) => cx.error_spanned_by(
            upgrade,
            format!(
                "`schema = {}` is the first version: there is no older item to upgrade; remove `upgrade`, or declare `schema = 2` when the shape changes",
                lit.base10_digits()
            ),
        ),
        (Some((lit, Ok(n))), None) if n > 1 && !entity.upgrade_given => cx.error_spanned_by(
            lit,
            format!(
                "`schema = {n}` needs an upgrade function for items of {}: add `upgrade = upgrade_fn` with `fn upgrade_fn(from: u32, item: &mut ddb_model::Item) -> Result<(), ddb_model::error::UpgradeError>`",
                if n == 2 { "version 1".to_owned() } else { format!("versions 1 to {}", n - 1) }
            ),
        ),
        (Some((lit, Err(_))), _) => cx.error_spanned_by(
            lit,
            format!("schema version is an integer from 1 to {MAX_SCHEMA}, as in `schema = 2`"),
        ),
        _ => {}
    }
}
