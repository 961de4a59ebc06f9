//! `impl Entity`: keys from the templates of `keys.rs`, key parsing, index keys, the version.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::{index_const, self_text};
use crate::ast::{Entity, Field, Identity, Strategy};
use crate::template::{Segment, Template};

/// `methods`: the names of the access methods generated (see `shape`).
pub fn expand(entity: &Entity, table: &TokenStream, methods: &[String]) -> TokenStream {
    let ident = entity.ident;
    let name = &entity.name;
    let key_fields = entity.key_fields();
    let tys = key_fields.iter().map(|f| f.ty);
    let texts = key_fields.iter().map(|f| self_text(f));
    let parse_key = parse_key(entity);
    let index_keys = index_keys(entity);
    let index_key_updates = index_key_updates(entity);
    let (version_def, version) = version(entity);
    let timestamps = timestamps(entity);
    let schema = schema(entity);
    let ttl = entity.ttl.as_ref().and_then(|(i, _)| entity.fields.get(*i)).map(|field| {
        let (ty, attr) = (field.ty, &field.attr_name);
        // A type that is no `ExpiryField` is reported once, at the field's type.
        let fns = quote_spanned! {ty.span()=> __ddb::ttl_fns::<#ty>() };
        let fi = field.ident;
        quote! {
            const TTL: __ddb::Option<__ddb::TtlDef> =
                __ddb::Some(__ddb::TtlDef::with(#attr, #fns));

            fn expiry_secs(&self) -> __ddb::Result<__ddb::Option<i64>, __ddb::Error> {
                (#fns.secs)(#attr, &self.#fi)
            }
        }
    });
    let tree_node = entity.hierarchy.as_ref().map(|h| {
        // A closure node's fields are copied under its ancestors: its updates go through the
        // tree, which rewrites the copies too.
        let through = matches!(h.strategy, Strategy::Closure).then(|| {
            let call = format!("`{ident}::tree(&db, ..).update(id)`");
            quote! { const UPDATE_THROUGH: __ddb::Option<&'static str> = __ddb::Some(#call); }
        });
        let attrs = match h.strategy {
            Strategy::NestedSet => quote! { __ddb::NESTED_BOOKKEEPING_ATTRS },
            _ => quote! { __ddb::TREE_BOOKKEEPING_ATTRS },
        };
        quote! {
            const BOOKKEEPING_ATTRS: &'static [&'static str] = #attrs;
            #through
        }
    });
    let identity = match &entity.identity {
        Identity::Table => TokenStream::new(),
        Identity::Tagged(attr) => quote! {
            const IDENTITY: __ddb::Identity =
                __ddb::Identity::Tagged(__ddb::TypeTag { attr: #attr, value: #name });
        },
        Identity::Keys(_) => quote! { const IDENTITY: __ddb::Identity = __ddb::Identity::Keys; },
    };
    let constants = (!entity.constants.is_empty()).then(|| {
        let tags = entity.constants.iter().map(|c| {
            let (attr, value) = (&c.attr, &c.value);
            quote! { __ddb::TypeTag { attr: #attr, value: #value } }
        });
        quote! { const CONSTANTS: &'static [__ddb::TypeTag] = &[#(#tags),*]; }
    });
    let from_key = from_key(entity);
    let sparse = sparse_indexes(entity);
    let nulls = super::fields::null_attrs(entity);
    let crypto = super::fields::crypto_attrs(entity);
    let shape = shape(entity, methods);
    let uniques = uniques(entity);
    let rules = super::rules::expand(entity);
    let rekey = rekey(entity);
    quote! {
        impl __ddb::Entity for #ident {
            type Table = #table;
            #shape
            type KeyFields = (#(#tys,)*);
            const NAME: &'static str = #name;
            const VERSION: __ddb::Option<__ddb::VersionDef> = #version_def;
            #schema
            #tree_node
            #identity
            #constants
            #from_key
            #sparse
            #nulls
            #crypto
            #uniques
            #rules
            #rekey

            fn key(&self) -> __ddb::Key<Self> {
                let parts = [#(#texts),*];
                __KEYS.key(&parts)
            }

            #parse_key
            #index_keys
            #index_key_updates
            #version
            #timestamps
            #ttl
        }
    }
}

/// Reads the stored key a run at a time, partition key first: each literal, each placeholder
/// (`part` for a field's first occurrence, `repeated` for a repeat, checked equal to the
/// first), then the end of the key.
fn parse_key(entity: &Entity) -> TokenStream {
    let mut read: Vec<String> = Vec::new();
    let pk = read_template(entity, &entity.pk, &mut read);
    let sk = match &entity.sk {
        Some(sk) => {
            let steps = read_template(entity, sk, &mut read);
            quote! {
                let mut __r = __KEYS.read_sk(sk)?;
                #steps
            }
        }
        None => quote! { let _ = sk; },
    };
    let vars = read.iter().map(|name| format_ident!("__k_{}", name));
    quote! {
        fn parse_key(pk: &str, sk: __ddb::Option<&str>) -> __ddb::Result<Self::KeyFields, __ddb::Error> {
            let mut __r = __KEYS.read_pk(pk);
            #pk
            #sk
            __ddb::Ok((#(#vars,)*))
        }
    }
}

/// A re-keyed entity's old layout (`REKEY`) and `rekey_key`, which reads a key in one layout
/// and writes the same key fields in the other.
fn rekey(entity: &Entity) -> Option<TokenStream> {
    let r = entity.rekey.as_ref()?;
    let key_fields = entity.key_fields();
    let mut read: Vec<String> = Vec::new();
    let pk_steps = read_template(entity, &r.pk, &mut read);
    let sk_steps = match &r.sk {
        Some(sk) => {
            let steps = read_template(entity, sk, &mut read);
            quote! {
                let mut __r = __REKEY.read_sk(key.sk())?;
                #steps
            }
        }
        None => TokenStream::new(),
    };
    let vars: Vec<syn::Ident> =
        key_fields.iter().map(|f| format_ident!("__k_{}", f.name())).collect();
    let parts = key_fields.iter().zip(&vars).map(|(f, var)| {
        let ty = f.ty;
        quote! { __ddb::key_arg::<#ty>(&#var) }
    });
    let old_pk = &r.pk.text;
    let old_sk = match &r.sk {
        Some(sk) => {
            let text = &sk.text;
            quote! { __ddb::Some(#text) }
        }
        None => quote! { __ddb::None },
    };
    let attrs = entity
        .fields
        .iter()
        .filter(|f| f.is_stored() && f.from_key.is_none())
        .map(|f| &f.attr_name);
    let complete = !entity.fields.iter().any(|f| f.flatten);
    Some(quote! {
        const REKEY: __ddb::Option<__ddb::RekeyDef> = __ddb::Some(__ddb::RekeyDef {
            pk: #old_pk,
            sk: #old_sk,
            attrs: &[#(#attrs),*],
            complete: #complete,
        });

        fn rekey_key(
            key: &__ddb::Key<Self>,
            to_old: bool,
        ) -> __ddb::Result<__ddb::Option<__ddb::Key<Self>>, __ddb::Error> {
            let (#(#vars,)*) = if to_old {
                <Self as __ddb::Entity>::parse_key(key.pk(), key.sk())?
            } else {
                let mut __r = __REKEY.read_pk(key.pk());
                #pk_steps
                #sk_steps
                (#(#vars,)*)
            };
            let parts = [#(#parts),*];
            __ddb::Ok(__ddb::Some(if to_old { __REKEY.key(&parts) } else { __KEYS.key(&parts) }))
        }
    })
}

/// The reader's steps for `template`; `read` holds the fields read so far.
fn read_template(entity: &Entity, template: &Template, read: &mut Vec<String>) -> TokenStream {
    let mut steps = TokenStream::new();
    for (i, segment) in template.segments.iter().enumerate() {
        let name = match segment {
            Segment::Lit(l) => {
                steps.extend(quote! { __r.lit(#l)?; });
                continue;
            }
            Segment::Field { name, .. } => name,
        };
        let Some(field) = entity.field(name) else {
            continue;
        };
        let (verbatim, format) = match segment {
            Segment::Field { verbatim, format, .. } => (*verbatim, *format),
            Segment::Lit(_) => (false, None),
        };
        let until = match template.segments.get(i + 1) {
            Some(Segment::Lit(l)) => l.chars().next().map(|c| quote! { __ddb::Some(#c) }),
            _ => None,
        };
        let until = until.unwrap_or_else(|| quote! { __ddb::None });
        let ty = field.ty;
        let fns = quote_spanned! {ty.span()=> __ddb::key_part::<#ty>() };
        let var = format_ident!("__k_{}", name);
        let (part, repeated, format) = match format {
            Some(format) => {
                let konst = super::keys::format_const(name, &format, verbatim);
                (quote!(formatted_part), quote!(formatted_repeated), quote! { #konst, })
            }
            None if verbatim => (quote!(verbatim_part), quote!(verbatim_repeated), quote!()),
            None => (quote!(part), quote!(repeated), quote!()),
        };
        if read.contains(name) {
            steps.extend(quote! { __r.#repeated(#name, #until, #fns, #format &#var)?; });
        } else {
            read.push(name.clone());
            steps.extend(quote! { let #var: #ty = __r.#part(#name, #until, #fns, #format)?; });
        }
    }
    steps.extend(quote! { __r.end()?; });
    steps
}

/// Every index key of the item: its `#[index]`es, and the index of its tree.
fn index_keys(entity: &Entity) -> TokenStream {
    let indexes = entity.indexes.iter().map(|index| {
        let konst = index_const(index);
        let fields = entity.fields_of(std::iter::once(&index.pk).chain(index.sk.as_ref()));
        // Computed values first, in locals the key texts borrow.
        let computed = fields.iter().filter_map(|f| {
            let c = f.computed.as_ref()?;
            let (func, args, ty) = (&c.func, &c.args, f.ty);
            let var = format_ident!("__c_{}", f.name());
            Some(quote_spanned! {func.span()=> let #var: #ty = #func(#(&self.#args),*); })
        });
        let texts = fields.iter().map(|f| {
            let (fi, ty) = (f.ident, f.ty);
            let text = quote_spanned! {ty.span()=> __ddb::index_key_text::<#ty>() };
            if f.computed.is_some() {
                let var = format_ident!("__c_{}", f.name());
                quote! { (#text)(&#var) }
            } else {
                quote! { (#text)(&self.#fi) }
            }
        });
        let write = quote! {
            #(#computed)*
            let parts = [#(#texts),*];
            #konst.write::<Self>(&parts, sink)?;
        };
        match &index.when {
            // A field is read, a method called (the compiler reports a wrong name or type at
            // the `when` value).
            Some(when) if entity.fields.iter().any(|f| f.ident == when) => {
                quote_spanned! {when.span()=> if self.#when { #write } }
            }
            Some(when) => quote_spanned! {when.span()=> if self.#when() { #write } },
            None => write,
        }
    });
    let tree = match entity.hierarchy.as_ref().map(|h| h.strategy) {
        Some(Strategy::Path) => quote! { __ddb::tree_index_keys::<Self>(self, sink); },
        Some(Strategy::Adjacency) => quote! { __ddb::adjacency_index_keys::<Self>(self, sink); },
        // The nested-set strategy writes its index key itself (the interval is no field).
        Some(Strategy::Closure | Strategy::NestedSet) | None => TokenStream::new(),
    };
    let body = quote! { #(#indexes)* #tree };
    if body.is_empty() {
        // The trait's default: no index.
        return TokenStream::new();
    }
    quote! {
        fn index_keys(&self, sink: &mut __ddb::IndexSink<'_>) -> __ddb::Done {
            #body
            __ddb::Ok(())
        }
    }
}

/// `index_key_updates()`: the runtime's `update_index_keys` over the index keys an update
/// may change (their `IndexKeys` say where each part comes from). Nothing when no update can
/// change an index key.
fn index_key_updates(entity: &Entity) -> TokenStream {
    let writable = entity.index_writable();
    let updates: Vec<syn::Ident> = entity
        .indexes
        .iter()
        .filter(|index| entity.index_updatable(&index.name))
        // A computed placeholder stands for the fields it is computed from: a key made only
        // of one and of key fields is rewritten when an update sets one of those fields.
        .filter(|index| {
            index.when.is_some() || entity.index_inputs(index).iter().any(|f| writable.contains(f))
        })
        .map(index_const)
        .collect();
    if updates.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn index_key_updates(
            key: &__ddb::Key<Self>,
            actions: &__ddb::UpdateActions<Self>,
            sink: &mut __ddb::IndexChanges<'_>,
        ) -> __ddb::Done {
            __ddb::update_index_keys(&__KEYS, &[#(#updates),*], key, actions, sink)
        }
    }
}

/// `SPARSE_INDEXES`: the indexes an item may be left out of (a key with an `Option` field,
/// or chosen by `when`). Nothing when there are none.
fn sparse_indexes(entity: &Entity) -> TokenStream {
    let mut names: Vec<String> = Vec::new();
    for index in &entity.indexes {
        let fields = entity.fields_of(std::iter::once(&index.pk).chain(index.sk.as_ref()));
        let optional = fields.iter().any(|f| match f.ty {
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
            _ => false,
        });
        let name = index.name.to_string();
        if (index.when.is_some() || optional) && !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return TokenStream::new();
    }
    quote! { const SPARSE_INDEXES: &'static [&'static str] = &[#(#names),*]; }
}

/// `FROM_KEY_ATTRS` and `key_field_values()` for the `#[entity(from_key)]` fields: a field of
/// the primary key is read from the parsed primary key, any other from the first index key
/// that holds it (absent when the item is not in that index).
fn from_key(entity: &Entity) -> TokenStream {
    let fields: Vec<&Field> = entity.fields.iter().filter(|f| f.from_key.is_some()).collect();
    if fields.is_empty() {
        return TokenStream::new();
    }
    let attrs = fields.iter().map(|f| &f.attr_name);
    let key_fields = entity.key_fields();
    let mut primary = Vec::new();
    let mut by_index = Vec::new();
    for field in &fields {
        let (attr, ty) = (&field.attr_name, field.ty);
        if let Some(i) = key_fields.iter().position(|k| k.ident == field.ident) {
            let i = syn::Index::from(i);
            primary.push(quote! {
                out.push((#attr, __ddb::field_value::<Self, #ty>(&__k.#i)?));
            });
            continue;
        }
        let holders: Vec<&crate::ast::Index> = entity
            .indexes
            .iter()
            .filter(|index| {
                std::iter::once(&index.pk)
                    .chain(index.sk.as_ref())
                    .any(|t| t.fields().any(|(n, _)| n == field.name()))
            })
            .collect();
        let name = field.name();
        let read = |index: &crate::ast::Index| {
            let parts = entity.fields_of(std::iter::once(&index.pk).chain(index.sk.as_ref()));
            let n = parts.iter().position(|p| p.ident == field.ident).unwrap_or_default();
            (index_const(index), n)
        };
        match holders.as_slice() {
            [] => {}
            // One key holds it: a key that does not read back is an error.
            [index] if index.when.is_none() => {
                let (konst, n) = read(index);
                by_index.push(quote! {
                    if let __ddb::Some(__t) = #konst.read::<Self>(item)? {
                        out.push((#attr, #konst.field_value::<Self, #ty>(#name, __t.get(#n))?));
                    }
                });
            }
            // Keys chosen by `when`: the item has the one that reads back.
            several => {
                let tries = several.iter().map(|index| {
                    let (konst, n) = read(index);
                    quote! {
                        if let __ddb::Ok(__ddb::Some(__t)) = #konst.read::<Self>(item) {
                            out.push((#attr, #konst.field_value::<Self, #ty>(#name, __t.get(#n))?));
                        } else
                    }
                });
                by_index.push(quote! { #(#tries)* {} });
            }
        }
    }
    let primary = (!primary.is_empty()).then(|| {
        quote! {
            let __k = __KEYS.parse_item(item)?;
            #(#primary)*
        }
    });
    quote! {
        const FROM_KEY_ATTRS: &'static [&'static str] = &[#(#attrs),*];

        fn key_field_values(
            item: &__ddb::Item,
            out: &mut __ddb::Vec<(&'static str, __ddb::AttributeValue)>,
        ) -> __ddb::Result<(), __ddb::Error> {
            #primary
            #(#by_index)*
            __ddb::Ok(())
        }
    }
}

/// `TIMESTAMPS`, `stamp_item()`, `stamp_attrs()` and `set_stamp()`: each timestamp field
/// through the runtime's `stamped` (a wrong type is reported at the field's type).
/// `const SCHEMA`: the version and the upgrade function, whose type is checked at the path
/// the attribute names (a wrong signature is reported there). Nothing without `schema`, or
/// with a version the checks refused.
fn schema(entity: &Entity) -> TokenStream {
    let Some(version) = entity.schema.as_ref().and_then(|lit| lit.base10_parse::<u32>().ok())
    else {
        return TokenStream::new();
    };
    let def = match &entity.upgrade {
        Some(path) => {
            let upgrade = quote_spanned! {path.span()=> {
                let __upgrade: __ddb::UpgradeFn = #path;
                __upgrade
            }};
            quote! { __ddb::SchemaDef::new(#version, #upgrade) }
        }
        None => quote! { __ddb::SchemaDef::first() },
    };
    quote! { const SCHEMA: __ddb::Option<__ddb::SchemaDef> = __ddb::Some(#def); }
}

fn timestamps(entity: &Entity) -> TokenStream {
    let fields: Vec<_> = entity.timestamp_fields().collect();
    if fields.is_empty() {
        // The trait's defaults: no timestamps.
        return TokenStream::new();
    }
    let attr_of = |created: bool| match fields
        .iter()
        .find(|(_, (_, c))| *c == created)
        .map(|(f, _)| &f.attr_name)
    {
        Some(attr) => quote! { __ddb::Some(#attr) },
        None => quote! { __ddb::None },
    };
    let (created, updated) = (attr_of(true), attr_of(false));
    let mut items = Vec::new();
    let mut attrs = Vec::new();
    let mut sets = Vec::new();
    for (field, (_, is_created)) in &fields {
        let (fi, ty, attr) = (field.ident, field.ty, &field.attr_name);
        let stamped = quote_spanned! {ty.span()=> __ddb::stamped::<Self, #ty> };
        let value = quote_spanned! {ty.span()=> __ddb::stamp_value::<Self, #ty> };
        let now = quote_spanned! {ty.span()=> __ddb::stamp_now::<Self, #ty> };
        items.push(quote! {
            if let __ddb::Some(__v) = #stamped(&self.#fi, stamp, #is_created)? {
                item.insert(__ddb::ToOwned::to_owned(#attr), #value(&__v)?);
            }
        });
        attrs.push(quote! { sink(#attr, #is_created, #now(stamp)?); });
        sets.push(quote! {
            if let __ddb::Ok(__ddb::Some(__v)) = #stamped(&self.#fi, stamp, #is_created) {
                self.#fi = __v;
            }
        });
    }
    quote! {
        const TIMESTAMPS: __ddb::TimestampsDef =
            __ddb::TimestampsDef { created: #created, updated: #updated };

        fn stamp_item(
            &self,
            stamp: __ddb::Stamp,
            item: &mut __ddb::Item,
        ) -> __ddb::Result<(), __ddb::Error> {
            #(#items)*
            __ddb::Ok(())
        }

        fn stamp_attrs(
            stamp: __ddb::Stamp,
            sink: &mut dyn FnMut(&'static str, bool, __ddb::AttributeValue),
        ) -> __ddb::Result<(), __ddb::Error> {
            #(#attrs)*
            __ddb::Ok(())
        }

        fn set_stamp(&mut self, stamp: __ddb::Stamp) {
            #(#sets)*
        }
    }
}

/// `VERSION`, `version()` and `set_version()`.
fn version(entity: &Entity) -> (TokenStream, TokenStream) {
    let Some(field) = entity.version.as_ref().and_then(|(i, _)| entity.fields.get(*i)) else {
        // The trait's defaults: no version.
        return (quote! { __ddb::None }, TokenStream::new());
    };
    let (fi, ty, attr) = (field.ident, field.ty, &field.attr_name);
    let fns = quote_spanned! {ty.span()=> __ddb::version_fns::<#ty>() };
    let methods = quote! {
        fn version(&self) -> __ddb::Option<u64> {
            __ddb::Some((#fns.get)(self.#fi))
        }

        fn set_version(&mut self, version: u64) {
            self.#fi = (#fns.set)(version);
        }
    };
    (quote! { __ddb::Some(__ddb::VersionDef { attr: #attr, max: #fns.max }) }, methods)
}

/// `const SHAPE`: the declaration as text, for the model tooling: one string of
/// length-prefixed texts (`ddb_model::__private::EntityShape` reads it), ending with
/// `methods`, the names of the access methods generated (the ones taking a `db`).
fn shape(entity: &Entity, methods: &[String]) -> TokenStream {
    let mut text = String::new();
    let mut put = |t: &str| text.push_str(&format!("{}:{t}", t.len()));
    put("pk");
    put(&entity.pk.text);
    put("sk");
    put(entity.sk.as_ref().map_or("", |t| t.text.as_str()));
    for index in &entity.indexes {
        put("index");
        put(&index.name.to_string());
        put(&index.query.as_ref().map(ToString::to_string).unwrap_or_default());
        put(&index.pk.text);
        put(index.sk.as_ref().map_or("", |t| t.text.as_str()));
        put(&index.when.as_ref().map(ToString::to_string).unwrap_or_default());
    }
    for index in &entity.multi_indexes {
        put("multi");
        put(&index.name.to_string());
        put(&index.query.as_ref().map(ToString::to_string).unwrap_or_default());
        for list in [&index.pk, &index.sk] {
            let fields: Vec<&Field> =
                list.iter().filter_map(|(i, _)| entity.fields.get(*i)).collect();
            put(&fields.len().to_string());
            for f in fields {
                put(&f.name());
                put(&f.attr_name);
            }
        }
    }
    let in_key: Vec<String> = entity
        .templates()
        .flat_map(|t| t.fields().map(|(n, _)| n.to_owned()).collect::<Vec<_>>())
        .collect();
    for f in entity.fields.iter().filter(|f| f.is_stored() && f.from_key.is_none()) {
        put("field");
        put(&f.attr_name);
        put(&type_text(f.ty));
        put(if in_key.contains(&f.name()) { "1" } else { "0" });
        if let Some(index) = &f.vector {
            put("vector");
            put(&f.attr_name);
            put(&index.to_string());
        }
    }
    if let Some(h) = &entity.hierarchy {
        put("tree");
        put(match h.strategy {
            Strategy::Path => "path",
            Strategy::Closure => "closure",
            Strategy::Adjacency => "adjacency",
            Strategy::NestedSet => "nested_set",
        });
        put(&h.tree_index().map(ToString::to_string).unwrap_or_default());
        let field = h.path.value.as_ref().or(h.parent.value.as_ref());
        put(&field.map(ToString::to_string).unwrap_or_default());
        put(&h.max_depth().to_string());
    }
    put("methods");
    put(&methods.join(" "));
    quote! { const SHAPE: &'static str = #text; }
}

/// A type as written, without the token spacing (`Option<String>`, `Vec<(u32, String)>`).
fn type_text(ty: &syn::Type) -> String {
    let text = quote! { #ty }.to_string();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' {
            let prev = out.chars().last().unwrap_or(' ');
            let next = chars.peek().copied().unwrap_or(' ');
            // Keep a space only between two words (`dyn Trait`) and after a comma.
            let word = |c: char| c.is_alphanumeric() || c == '_' || c == '\'';
            if (word(prev) && word(next)) || prev == ',' {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `UNIQUES` and `unique_texts`: each constraint's definition, and its value text read from
/// an item, part by part, through `UniqueText::part::<FieldType>` at the field's type (a
/// type that is no `UniqueField` is reported there).
fn uniques(entity: &Entity) -> TokenStream {
    if entity.uniques.is_empty() {
        return TokenStream::new();
    }
    let name = &entity.name;
    let mut defs = Vec::new();
    let mut parts = Vec::new();
    for (n, unique) in entity.uniques.iter().enumerate() {
        let fields: Vec<&Field> =
            unique.fields.iter().filter_map(|(i, _)| entity.fields.get(*i)).collect();
        let names: Vec<String> = fields.iter().map(|f| f.name()).collect();
        let attrs = fields.iter().map(|f| &f.attr_name);
        let field = names.join(", ");
        let scope = unique
            .scope
            .as_ref()
            .map_or_else(|| format!("{name}.{}", names.join("+")), syn::LitStr::value);
        defs.push(
            quote! { __ddb::UniqueDef { field: #field, attrs: &[#(#attrs),*], scope: #scope } },
        );
        let steps = fields.iter().map(|f| {
            let (ty, attr) = (f.ty, &f.attr_name);
            quote_spanned! {ty.span()=> __t.part::<#ty>(#name, #attr, __item)?; }
        });
        parts.push(quote! {{
            let mut __t = __ddb::UniqueText::new();
            #(#steps)*
            __sink(#n, __t.finish());
        }});
    }
    let ident = entity.ident;
    let table = entity.table_display();
    let message = format!(
        "{table} has no entity type attribute (`no_type_attr`): the sentinel items of `{ident}`'s unique constraints are told apart from entities by it; give the table a `type_attr`"
    );
    let span = entity.uniques.first().map_or_else(proc_macro2::Span::call_site, |u| u.span);
    let tagged = quote_spanned! {span=>
        const _: () = ::core::assert!(__ddb::table_type_attr::<#ident>().is_some(), #message);
    };
    quote! {
        const UNIQUES: &'static [__ddb::UniqueDef] = {
            #tagged
            &[#(#defs),*]
        };
        fn unique_texts(
            __item: &__ddb::Item,
            __sink: &mut dyn FnMut(usize, __ddb::Option<__ddb::String>),
        ) -> __ddb::Result<(), __ddb::Error> {
            #(#parts)*
            __ddb::Ok(())
        }
    }
}
