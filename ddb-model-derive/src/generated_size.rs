//! How much code the derives generate for the reference entities, pretty-printed as
//! `cargo expand` would show it (prettyplease, blank lines left out).
//! `cargo test -p ddb-model-derive generated_size -- --nocapture` prints the table
//! (`DDB_SHOW_EXPANSION=1` also prints the code). Each bound is half of what the derive
//! generated before it delegated to the runtime (the `before` column, measured on the commit
//! that added this test), so the generated code cannot grow back unnoticed.

use proc_macro2::TokenStream;
use syn::DeriveInput;

/// Lines of `tokens` pretty-printed, blank lines left out. `DDB_SHOW_EXPANSION=1` prints
/// the code.
fn lines(tokens: syn::Result<TokenStream>) -> usize {
    let file: syn::File = match tokens.and_then(syn::parse2) {
        Ok(file) => file,
        Err(err) => panic!("no code generated: {err}"),
    };
    let code = prettyplease::unparse(&file);
    if std::env::var_os("DDB_SHOW_EXPANSION").is_some() {
        println!("{code}");
    }
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

fn entity(input: &DeriveInput) -> usize {
    lines(crate::entity(input))
}

fn edge(input: &DeriveInput) -> usize {
    lines(crate::edge(input))
}

#[test]
fn generated_size() {
    let literal_sk: DeriveInput = syn::parse_quote! {
        #[entity(pk = "USER#<id>", sk = "PROFILE")]
        struct User { id: String, name: String, email: String }
    };
    let one_placeholder: DeriveInput = syn::parse_quote! {
        #[entity(pk = "USER#<user>", sk = "ORDER#<id>")]
        struct Order { user: String, id: String, total: u64 }
    };
    let with_index: DeriveInput = syn::parse_quote! {
        #[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
        #[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>#<id>")]
        struct Member { id: String, org: String, name: String, email: String }
    };
    let hierarchy: DeriveInput = syn::parse_quote! {
        #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
        #[hierarchy(path = path, index = gsi1)]
        struct Folder { drive: String, path: ddb_model::TreePath, name: String }
    };
    let edge_input: DeriveInput = syn::parse_quote! {
        #[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
        #[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"))]
        struct Follow { follower: String, followee: String, since: u64 }
    };
    // (name, lines generated before, lines generated now)
    let rows = [
        ("3 fields, literal sort key", 281, entity(&literal_sk)),
        ("3 fields, one sort-key placeholder", 496, entity(&one_placeholder)),
        ("4 fields, #[index] with two levels", 659, entity(&with_index)),
        ("path #[hierarchy]", 558, entity(&hierarchy)),
        ("#[derive(Entity, Edge)]", 553, entity(&edge_input) + edge(&edge_input)),
    ];
    println!("| reference entity | before | now | now / before |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, before, now) in &rows {
        println!("| {name} | {before} | {now} | {:.2} |", *now as f64 / *before as f64);
    }
    // Half of before in all, and each entity within two lines of half of its own: an edge's
    // `update` holds the key fields' texts for an upsert (4 lines, issue 27).
    let (before, now) = rows.iter().fold((0, 0), |(b, n), row| (b + row.1, n + row.2));
    assert!(
        now <= before / 2,
        "{now} generated lines in all, more than {} (half of {before})",
        before / 2
    );
    for (name, before, now) in rows {
        let bound = before / 2 + 2;
        assert!(
            now <= bound,
            "{name}: {now} generated lines, more than {bound} (half of {before}, and 2)"
        );
    }
}
