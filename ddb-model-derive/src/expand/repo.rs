//! Repository methods on the entity: thin wrappers over the generic `Db` operations, called
//! through the generic helpers of `ddb_model::__private` (`db_get`, ...).

use proc_macro2::TokenStream;
use quote::quote;

use super::keys::params;
use crate::ast::Entity;
use crate::template::Segment;

pub fn expand(entity: &Entity, db: &TokenStream) -> TokenStream {
    let ident = entity.ident;
    let vis = entity.vis;
    let key_fields = entity.key_fields();
    let key_params = params(&key_fields, false);
    let params: Vec<_> = key_fields.iter().map(|f| f.ident).collect();
    // The stored names of the key fields, for an upsert (which writes them to a new item).
    let key_attrs: Vec<&String> = key_fields.iter().map(|f| &f.attr_name).collect();
    // A key field whose placeholder has a lossy format (`:lower`, `:iso8601(ms)`) cannot be
    // read back from the key: the upsert stores the text it was given.
    let lossy = |name: &str| {
        std::iter::once(&entity.pk).chain(entity.sk.as_ref()).any(|t| {
            t.segments.iter().any(|s| {
                matches!(s, Segment::Field { name: n, format: Some(f), .. }
                    if n == name && !f.lossless())
            })
        })
    };
    let stored = key_fields.iter().map(|f| {
        let (ty, param) = (f.ty, f.ident);
        if lossy(&f.ident.to_string()) {
            quote! { __ddb::key_arg_serialized::<#ty>(&#param) }
        } else {
            quote! { __ddb::key_arg_stored::<#ty>(&#param) }
        }
    });
    // Typed only when empty (a key of literals), where nothing else says the element type.
    let stored_ty = key_fields.is_empty().then(|| quote! { : [__ddb::Option<__ddb::String>; 0] });
    let stamped = entity.created_at.is_some() || entity.updated_at.is_some();
    let generated = entity.fields.iter().any(|f| f.generated.is_some());
    let receiver = if entity.version.is_some() || stamped || generated {
        quote! { &'__db mut self }
    } else {
        quote! { &'__db self }
    };
    let version_note = match (entity.version.is_some(), stamped) {
        (true, true) => {
            " The stored version must be this value's version; on success the version and timestamp fields hold what was stored."
        }
        (true, false) => {
            " The stored version must be this value's version; on success the version field holds the new one."
        }
        (false, true) => " On success the timestamp fields hold what was stored.",
        (false, false) => "",
    };
    let get_doc = format!("Reads the `{ident}` with these key fields (`Ok(None)` when absent).");
    let generated_note = if generated {
        " Its unset generated ids are filled in first (and kept in the value)."
    } else {
        ""
    };
    let create_doc = format!(
        "Writes this `{ident}` if no item has its key; otherwise fails with `Error::AlreadyExists`.{generated_note}{version_note}"
    );
    let put_doc = format!(
        "Writes this `{ident}`, inserting it or overwriting the stored `{ident}` with its key.{generated_note}{version_note}"
    );
    let replace_doc = format!(
        "Overwrites the stored `{ident}` with this value's key; fails with `Error::NotFound` when there is none.{version_note}"
    );
    let update_doc = format!(
        "Starts an update of the stored `{ident}` with these key fields (`.upsert()` creates it when missing)."
    );
    let delete_doc = format!("Starts a delete of the `{ident}` with these key fields.");

    quote! {
        #[doc = #get_doc]
        #vis fn get<'__db>(
            db: &'__db #db,
            #(#key_params),*
        ) -> __ddb::Get<'__db, #ident> {
            __ddb::db_get::<#ident>(db, #ident::key(#(#params),*))
        }

        #[doc = #create_doc]
        #vis fn create<'__db>(#receiver, db: &'__db #db) -> __ddb::Put<'__db, #ident> {
            __ddb::db_create::<#ident>(db, self)
        }

        #[doc = #put_doc]
        #vis fn put<'__db>(#receiver, db: &'__db #db) -> __ddb::Put<'__db, #ident> {
            __ddb::db_put::<#ident>(db, self)
        }

        #[doc = #replace_doc]
        #vis fn replace<'__db>(#receiver, db: &'__db #db) -> __ddb::Put<'__db, #ident> {
            __ddb::db_replace::<#ident>(db, self)
        }

        #[doc = #update_doc]
        #vis fn update<'__db>(
            db: &'__db #db,
            #(#key_params),*
        ) -> __ddb::Update<'__db, #ident> {
            let __stored #stored_ty = [#(#stored),*];
            __ddb::db_update::<#ident>(db, #ident::key(#(#params),*))
                .with_key_attrs(&[#(#key_attrs),*], __stored)
        }

        #[doc = #delete_doc]
        #vis fn delete<'__db>(
            db: &'__db #db,
            #(#key_params),*
        ) -> __ddb::Delete<'__db, #ident> {
            __ddb::db_delete::<#ident>(db, #ident::key(#(#params),*))
        }
    }
}
