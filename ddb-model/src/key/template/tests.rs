use std::borrow::Cow;

use proptest::prelude::*;

use super::*;
use crate::error::{Error, KeyParseReason as Why};
use crate::escape::test_support::{cases, esc};
use crate::escape::unescape;

const USER: KeyTemplate = KeyTemplate::new("USER#<id>", &[lit("USER#"), part(0)]);
const ORDER: KeyTemplate =
    KeyTemplate::new("ORDER#<year>#<seq>", &[lit("ORDER#"), part(1), lit("#"), part(2)]);
/// An edge's inverse sort key: `to` (part 1) then `from` (part 0).
const INVERSE: KeyTemplate =
    KeyTemplate::new("IN#<to>/FROM|<from>", &[lit("IN#"), part(1), lit("/FROM|"), part(0)]);
/// A tree node's sort key, the path after the prefix.
const NODE: KeyTemplate = KeyTemplate::new("<prefix><path>", &[lit("NODE#"), part(0)]);
/// A template with a repeated placeholder and a literal after the last one.
const TWICE: KeyTemplate = KeyTemplate::new(
    "<a>:<b>~<a>#END",
    &[part(0), lit(":"), part(1), lit("~"), part(0), lit("#END")],
);

const ANCESTOR: KeyTemplate = KeyTemplate::new("<id>/", &[part(0), lit("/")]);
const LITERAL: KeyTemplate = KeyTemplate::new("PROFILE", &[lit("PROFILE")]);
const OP: KeyTemplate = KeyTemplate::new("<prefix>~op", &[lit("NODE#"), lit("~op")]);
const LEVEL: KeyTemplate = KeyTemplate::new("<depth>#<path>", &[part(0), lit("#"), part(1)]);
const ADJACENT: KeyTemplate = KeyTemplate::new("<a><b>", &[part(0), part(1)]);
const NO_SEPARATOR: KeyTemplate = KeyTemplate::new("<a>x<b>", &[part(0), lit("x"), part(1)]);
const ESCAPE_AFTER: KeyTemplate = KeyTemplate::new("<a>%<b>", &[part(0), lit("%"), part(1)]);

fn parse<'k>(t: &KeyTemplate, key: &'k str) -> Result<Vec<Cow<'k, str>>, Error> {
    t.parse("Test", "sk", key)
}

#[test]
fn render_writes_literals_and_escaped_parts() {
    assert_eq!(USER.render(&["ann"]), "USER#ann");
    assert_eq!(USER.render(&["a#b/c%d"]), "USER#a%23b%2Fc%25d");
    let parts = ["ann", "2024", "7"];
    assert_eq!(ORDER.render(&parts), "ORDER#2024#7");
    assert_eq!(
        ORDER.render(&[Cow::Borrowed("x"), Cow::Borrowed("1:2"), Cow::Borrowed("")]),
        "ORDER#1%3A2#"
    );
    // A part that is not given is empty.
    assert_eq!(ORDER.render::<&str>(&[]), "ORDER##");
    // Index key parts: an empty `Option` is written as the empty text (never sent).
    let index_parts = [Some(Cow::Borrowed("a")), None, Some(Cow::Borrowed("b"))];
    assert_eq!(ORDER.render(&index_parts), "ORDER##b");
    assert_eq!(TWICE.render(&["x", "y"]), "x:y~x#END");
}

#[test]
fn render_is_one_allocation_for_parts_without_escapes() {
    // Sized from the parts up front: growing while writing would leave room to spare.
    let (year, seq) = ("y".repeat(20), "s".repeat(40));
    let key = ORDER.render(&["", &year, &seq]);
    assert_eq!(key.len(), "ORDER##".len() + 60);
    assert_eq!(key.capacity(), key.len());
}

#[test]
fn escaped_parts_are_written_as_they_are() {
    let escaped = esc("a/b");
    assert_eq!(NODE.render(&[Escaped(&escaped)]), NODE.render(&["a/b"]));
    assert_eq!(NODE.render(&[Escaped("a%2Fb")]), "NODE#a%2Fb");
    let mut out = String::from("^");
    for id in ["a", "b%23c"] {
        ANCESTOR.render_into(&[Escaped(id)], &mut out);
    }
    assert_eq!(out, "^a/b%23c/");
}

#[test]
fn edge_templates_number_the_endpoints() {
    // Part 0 is the `from` node, part 1 the `to` node, wherever they stand.
    assert_eq!(INVERSE.render(&["ann", "bob"]), "IN#bob/FROM|ann");
    assert_eq!(INVERSE.render(&["a|b", "c/d"]), "IN#c%2Fd/FROM|a%7Cb");
    assert_eq!(INVERSE.base(), "IN#");
    assert_eq!(INVERSE.prefix(&["", "bob"], 1), "IN#bob/FROM|");
    let texts = parse(&INVERSE, "IN#c%2Fd/FROM|a%7Cb").unwrap();
    assert_eq!(texts, ["a|b", "c/d"]);
}

#[test]
fn base_is_the_literal_before_the_first_placeholder() {
    assert_eq!(USER.base(), "USER#");
    assert!(matches!(USER.base(), Cow::Borrowed(_)));
    assert_eq!(TWICE.base(), "");
    assert_eq!(LITERAL.base(), "PROFILE");
    // Two literal runs in a row (a tree's `<prefix>~op`) are one base.
    assert_eq!(OP.base(), "NODE#~op");
    assert_eq!(OP.render::<&str>(&[]), "NODE#~op");
    assert_eq!(KeyTemplate::new("", &[]).base(), "");
}

#[test]
fn prefix_stops_before_a_placeholder() {
    let parts = ["u", "2024", "7"];
    assert_eq!(ORDER.prefix(&parts, 0), "ORDER#");
    assert_eq!(ORDER.prefix(&parts, 1), "ORDER#2024#");
    assert_eq!(ORDER.prefix(&parts, 2), "ORDER#2024#7");
    assert_eq!(ORDER.prefix(&parts, 9), "ORDER#2024#7");
    assert_eq!(ORDER.prefix(&["u", "20#24"], 1), "ORDER#20%2324#");
    // Placeholders count in template order, whatever their part numbers.
    assert_eq!(TWICE.prefix(&["x", "y"], 2), "x:y~");
    assert_eq!(LEVEL.prefix(&["003"], 1), "003#");
}

#[test]
fn parse_reads_the_parts_back() {
    assert_eq!(parse(&USER, "USER#a%23b").unwrap(), ["a#b"]);
    assert_eq!(parse(&USER, "USER#").unwrap(), [""]);
    let texts = parse(&ORDER, "ORDER#1%3A2#").unwrap();
    assert_eq!(texts, ["", "1:2", ""], "part 0 is not in the template: empty");
    assert_eq!(parse(&TWICE, "x:y~x#END").unwrap(), ["x", "y"]);
    assert_eq!(parse(&LEVEL, "003#a%2Fb").unwrap(), ["003", "a/b"]);
}

#[test]
fn parse_rejects_what_the_template_does_not_write() {
    let reason = |t: &KeyTemplate, key: &str| match parse(t, key) {
        Err(Error::KeyParse { reason, template, attribute, input, .. }) => {
            assert_eq!((template, attribute, input.as_str()), (t.text(), "sk", key));
            *reason
        }
        other => panic!("{key}: {other:?}"),
    };
    let text = |t: &KeyTemplate, key: &str| reason(t, key).to_string();
    let (s, at) = (String::from, 0);
    assert_eq!(reason(&USER, "USR#a"), Why::Expected { literal: s("USER#"), at });
    assert!(text(&USER, "USR#a").contains("expected `USER#`"));
    assert!(text(&USER, "USER#a#b").contains("unescaped `#`"));
    assert!(text(&USER, "USER#a%2").contains("invalid escape"));
    assert!(matches!(reason(&USER, "USER#a%41"), Why::Unescape { field, .. } if field == "id"));
    assert!(text(&USER, "USER#a%41").contains("field `id`"));
    assert!(text(&ORDER, "ORDER#2024").contains("expected `#`"));
    let (first, again) = (s("x"), s("z"));
    let twice = Why::Repeated { placeholder: s("a"), first, again };
    assert_eq!(reason(&TWICE, "x:y~z#END"), twice);
    assert!(text(&TWICE, "x:y~z#END").contains("`a` appears twice"));
    assert_eq!(reason(&TWICE, "x:y~x#ENDS"), Why::Trailing { at: 9 });
    assert!(text(&TWICE, "x:y~x#ENDS").contains("unexpected text"));
    assert_eq!(reason(&ADJACENT, "ab"), Why::AdjacentPlaceholders { placeholder: s("a") });
    assert!(text(&ADJACENT, "ab").contains("followed by another placeholder"));
    // A literal that does not start with a separator ends the part at its first character.
    assert_eq!(parse(&NO_SEPARATOR, "007xb").unwrap(), ["007", "b"]);
    let escaped = Why::EscapedLiteral { placeholder: s("a"), literal: "%" };
    assert_eq!(reason(&ESCAPE_AFTER, "a%25b"), escaped);
    assert!(text(&ESCAPE_AFTER, "a%25b").contains("escape character"));
}

#[test]
fn key_values_are_checked_against_the_limits() {
    assert!(check_key_value("User", "pk", "a", MAX_PARTITION_KEY_BYTES).is_ok());
    let long = "x".repeat(MAX_SORT_KEY_BYTES + 1);
    match check_key_value("User", "sk", &long, MAX_SORT_KEY_BYTES) {
        Err(Error::InvalidKey { entity, attribute, problem: KeyProblem::TooLong { len, max } }) => {
            assert_eq!((entity, attribute.as_str(), len, max), ("User", "sk", long.len(), 1024));
        }
        other => panic!("{other:?}"),
    }
    let err = check_key_value("User", "pk", "", MAX_PARTITION_KEY_BYTES).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { problem: KeyProblem::Empty, .. }));
}

/// Texts rich in what keys care about: every reserved character, hex digits, the empty text,
/// and characters of every UTF-8 length.
fn text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        4 => prop::sample::select(vec!['#', '/', '|', '~', ':', '%', '2', '3', 'F', 'a', ' ', '<', '>']),
        1 => any::<char>(),
        1 => prop::sample::select(vec!['\u{10FFFF}', '\u{FFFF}', 'é', '\0']),
    ];
    prop_oneof![
        prop::collection::vec(chars, 0..10).prop_map(|v| v.into_iter().collect()),
        any::<String>(),
    ]
}

fn three() -> impl Strategy<Value = [String; 3]> {
    (text(), text(), text()).prop_map(|(a, b, c)| [a, b, c])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    /// Every template reads back the parts it wrote, over the whole of Unicode.
    #[test]
    fn parse_inverts_render(a in text(), b in text(), c in text()) {
        let user = USER.render(&[&a]);
        prop_assert_eq!(parse(&USER, &user).unwrap(), [a.clone()]);
        let order = ORDER.render(&[&a, &b, &c]);
        prop_assert_eq!(parse(&ORDER, &order).unwrap(), ["", b.as_str(), c.as_str()]);
        let inverse = INVERSE.render(&[&a, &b]);
        prop_assert_eq!(parse(&INVERSE, &inverse).unwrap(), [a.as_str(), b.as_str()]);
        let twice = TWICE.render(&[&a, &b]);
        prop_assert_eq!(parse(&TWICE, &twice).unwrap(), [a.as_str(), b.as_str()]);
    }

    /// Whatever a template accepts, it writes back byte for byte: two keys never read as one.
    #[test]
    fn parse_accepts_only_rendered_keys(key in text(), a in text()) {
        for t in [&USER, &ORDER, &INVERSE, &TWICE] {
            if let Ok(texts) = parse(t, &key) {
                prop_assert_eq!(t.render(&texts), key.clone());
            }
        }
        let key = format!("USER#{key}");
        if let Ok(texts) = parse(&USER, &key) {
            prop_assert_eq!(USER.render(&texts), key);
        }
        let key = INVERSE.render(&[&a, &a]);
        prop_assert_eq!(parse(&INVERSE, &key).unwrap(), [a.as_str(), a.as_str()]);
    }

    /// A prefix up to placeholder `n` starts exactly the keys whose first `n` placeholders
    /// hold the same texts: whole components, never a longer value (`NY` is not `NYC`).
    #[test]
    fn prefixes_are_component_exact(p in three(), q in three()) {
        for n in 0..2 {
            let prefix = ORDER.prefix(&p, n);
            prop_assert!(ORDER.render(&p).starts_with(&prefix));
            let same = p[1..1 + n] == q[1..1 + n];
            prop_assert_eq!(ORDER.render(&q).starts_with(&prefix), same, "n = {}", n);
            let prefix = INVERSE.prefix(&p, n);
            let same = [&p[1], &p[0]][..n] == [&q[1], &q[0]][..n];
            prop_assert_eq!(INVERSE.render(&q).starts_with(&prefix), same, "n = {}", n);
        }
        let extended = [p[0].clone(), format!("{}x", p[1]), p[2].clone()];
        prop_assert!(!ORDER.render(&extended).starts_with(&ORDER.prefix(&p, 1)));
    }

    /// The tree's keys are the bytes they were before templates wrote them: the prefix, then
    /// the escaped path (`/` of the subtree included), the padded depth, the intent record.
    #[test]
    fn tree_keys_keep_their_bytes(path in text(), depth in 0usize..2000) {
        let mut old = String::from("NODE#");
        escape_into(&path, &mut old);
        prop_assert_eq!(NODE.render(&[&path]), old.clone());
        escape_into("/", &mut old);
        prop_assert_eq!(NODE.render(&[format!("{path}/")]), old);
        let mut old = format!("{depth:03}#");
        prop_assert_eq!(LEVEL.prefix(&[format!("{depth:03}")], 1), old.clone());
        escape_into(&path, &mut old);
        prop_assert_eq!(LEVEL.render(&[format!("{depth:03}"), path.clone()]), old);
        prop_assert_eq!(NODE.render(&[Escaped(&esc(&path))]), NODE.render(&[&path]));
        let node = NODE.render(&[&path]);
        prop_assert_eq!(unescape(&node["NODE#".len()..]).unwrap(), path);
    }
}

/// `N#<n:unpadded>#<s:lower>|<v:upper:verbatim>x`: formats written, read back exactly, and
/// checked like any placeholder.
const FORMATTED: KeyTemplate = KeyTemplate::new(
    "N#<n:unpadded>#<s:lower>|<v:upper:verbatim>x",
    &[
        lit("N#"),
        formatted(0, crate::key::unpadded::<u32>()),
        lit("#"),
        formatted(1, crate::key::text_format::<String>().lower()),
        lit("|"),
        formatted(2, crate::key::text_format::<String>().upper().verbatim()),
        lit("x"),
    ],
);

#[test]
fn formatted_placeholders_write_and_read_their_format() {
    use crate::KeyPart;
    let n = 5u32.key_text();
    let key = FORMATTED.render(&[n.as_ref(), "Ann#B", "q/r"]);
    assert_eq!(key, "N#5#ann%23b|Q/Rx");
    let texts = parse(&FORMATTED, &key).unwrap();
    assert_eq!(texts, ["0000000005", "ann#b", "Q/R"]);
    // Texts the formats do not write.
    for bad in ["N#05#ann|Qx", "N#5#Ann|Qx", "N#5#ann|qx", "N#-1#ann|Qx", "N#4294967296#a|Qx"] {
        match parse(&FORMATTED, bad) {
            Err(Error::KeyParse { reason, .. }) => {
                assert!(matches!(*reason, Why::Format { .. }), "{bad}: {reason:?}")
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    // The verbatim part is checked on the text it writes: `x` upper-cased is no `x`.
    assert!(FORMATTED.check(&[n.as_ref(), "a", "x"]).is_ok());
    // Prefixes write the formats too.
    assert_eq!(FORMATTED.prefix(&[n.as_ref(), "Ann"], 2), "N#5#ann|");
}
