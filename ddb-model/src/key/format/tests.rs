//! The key formats against models: each writes what the peer libraries write, reads back
//! exactly what it writes (and nothing else), and keeps order where it claims to.

use proptest::prelude::*;

use super::*;
use crate::KeyPart;

fn cases() -> u32 {
    std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(0).max(2048)
}

/// Reads back through the format and the type: the value whose key wrote `text`.
fn read_value<T: KeyPart>(format: KeyFormat, text: &str) -> Option<T> {
    let key_text = format.read(text)?;
    let value = T::from_key_text(&key_text).ok()?;
    // The reader's canonical check: the value writes the key text it was read from.
    (value.key_text() == key_text).then_some(value)
}

fn round_trip<T: KeyPart + UnpaddedKey + std::fmt::Display + PartialEq + std::fmt::Debug>(
    v: T,
) -> Result<(), TestCaseError> {
    let format = unpadded::<T>();
    let written = format.write(&v.key_text()).into_owned();
    // What JavaScript's `String(n)` and Rust's `Display` write.
    prop_assert_eq!(&written, &v.to_string());
    prop_assert_eq!(read_value::<T>(format, &written), Some(v));
    Ok(())
}

/// Texts that look like numbers, and any text.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+]?[0-9]{0,41}",
        "-?0[0-9]{0,3}",
        any::<String>(),
        any::<i128>().prop_map(|v| v.to_string()),
        any::<u128>().prop_map(|v| v.to_string()),
    ]
}

/// Year, month, day, hour, minute, second, nanosecond.
type Fields = (u32, u32, u32, u32, u32, u32, u32);

/// A canonical `DateTime<Utc>` key text (years 0 to 9999) and its fields.
fn datetime() -> impl Strategy<Value = (Fields, String)> {
    (0u32..10000, 1u32..13, 1u32..29, 0u32..24, 0u32..60, 0u32..60, 0u32..1_000_000_000).prop_map(
        |f @ (y, mo, d, h, mi, s, n)| {
            (f, format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}.{n:09}Z"))
        },
    )
}

fn precision() -> impl Strategy<Value = Precision> {
    prop::sample::select(vec![
        Precision::Seconds,
        Precision::Millis,
        Precision::Micros,
        Precision::Nanos,
    ])
}

/// An ISO 8601 format of `precision`, upper or lower case, maybe verbatim.
fn iso(precision: Precision, lower: bool) -> KeyFormat {
    let format = iso8601::<()>(precision);
    if lower { format.lower() } else { format }
}

impl Iso8601Key for () {}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn unpadded_integers_round_trip(a in any::<i8>(), b in any::<u8>(), c in any::<i16>(),
        d in any::<u32>(), e in any::<i32>(), f in any::<u64>(), g in any::<i64>(),
        h in any::<u128>(), i in any::<i128>(), j in any::<usize>(), k in any::<isize>())
    {
        round_trip(a)?; round_trip(b)?; round_trip(c)?; round_trip(d)?; round_trip(e)?;
        round_trip(f)?; round_trip(g)?; round_trip(h)?; round_trip(i)?; round_trip(j)?;
        round_trip(k)?;
    }

    /// A text that reads back is the one text its value writes: no two texts are one value.
    #[test]
    fn unpadded_reads_only_what_it_writes(text in number_text()) {
        fn check<T: KeyPart + UnpaddedKey>(text: &str) -> Result<(), TestCaseError> {
            let format = unpadded::<T>();
            if let Some(v) = read_value::<T>(format, text) {
                let key_text = v.key_text();
                prop_assert_eq!(format.write(&key_text), text);
            }
            Ok(())
        }
        check::<u8>(&text)?; check::<i8>(&text)?; check::<u32>(&text)?; check::<i32>(&text)?;
        check::<u64>(&text)?; check::<i64>(&text)?; check::<u128>(&text)?;
        check::<i128>(&text)?;
    }

    /// ISO 8601 as JavaScript's `toISOString` writes it (to the precision), in the case
    /// chosen; read back as the value cut to the precision; ordered as the values.
    #[test]
    fn iso8601_round_trips_in_order(
        (a, a_text) in datetime(), (_, b_text) in datetime(), p in precision(), lower: bool,
    ) {
        let format = iso(p, lower);
        let (y, mo, d, h, mi, s, n) = a;
        let digits = p.digits();
        let fraction = format!(".{n:09}");
        let fraction = if digits == 0 { "" } else { &fraction[..=digits] };
        let mut expected = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}Z");
        if lower {
            expected = expected.to_lowercase();
        }
        let written = format.write(&a_text);
        prop_assert_eq!(&written, &expected);
        // Read back: the key text of the value cut to the precision.
        let cut = 10u32.pow(9 - digits as u32);
        let truncated = format!("{}{:09}Z", &a_text[..16], n / cut * cut);
        let read = format.read(&written);
        prop_assert_eq!(read.as_deref(), Some(truncated.as_str()));
        // The other case is not this format's text.
        let other = if lower { written.to_uppercase() } else { written.to_lowercase() };
        prop_assert_eq!(format.read(&other), None);
        // Order: the texts sort as the values (equal when they differ below the precision).
        let b_written = format.write(&b_text);
        prop_assert!((a_text <= b_text) <= (*written <= *b_written));
        prop_assert_eq!(format.lossless(), digits == 9);
    }

    /// A text that reads back is the one text written for what it reads as.
    #[test]
    fn iso8601_reads_only_what_it_writes(
        (_, text) in datetime(), p in precision(), lower: bool, at in 0usize..40,
        with in prop::sample::select(vec!['0', '9', '-', ':', '.', 'T', 't', 'Z', 'z', '+', ' ', 'é']),
        junk in any::<String>(), remove: bool,
    ) {
        let format = iso(p, lower);
        let mut mutated = format.write(&text).into_owned();
        let at = at.min(mutated.len());
        if remove && at < mutated.len() {
            mutated.remove(at);
        } else {
            mutated.insert(at, with);
        }
        for candidate in [mutated, junk] {
            if let Some(key_text) = format.read(&candidate) {
                // The key text has the layout the datetime type reads (years and ranges are
                // its parser's to check).
                prop_assert!(iso_parts(&key_text).is_some(), "{} -> {}", candidate, key_text);
                prop_assert_eq!(format.write(&key_text), candidate.as_str());
            }
        }
    }

    /// A case of text writes that case, and reads back exactly the texts in it.
    #[test]
    fn cases_read_only_what_they_write(text in any::<String>(), ascii in "[a-zA-Z0-9 #_]{0,12}") {
        for format in [super::text::<String>().lower(), super::text::<String>().upper()] {
            for text in [&text, &ascii] {
                let written = format.write(text);
                let read = format.read(&written);
                prop_assert_eq!(read.as_deref(), Some(&*written));
                if let Some(read) = format.read(text) {
                    prop_assert_eq!(format.write(&read), text.as_str());
                }
            }
            prop_assert!(!format.ordered() && !format.lossless());
        }
        prop_assert_eq!(super::text::<String>().lower().write(&ascii), ascii.to_lowercase());
        prop_assert_eq!(super::text::<String>().upper().write(&ascii), ascii.to_uppercase());
    }
}

#[test]
fn unpadded_examples() {
    let u32s = unpadded::<u32>();
    assert_eq!(u32s.write(&5u32.key_text()), "5");
    assert_eq!(u32s.write(&0u32.key_text()), "0");
    assert_eq!(u32s.read("5").as_deref(), Some("0000000005"));
    for bad in ["", "05", "00", "-5", "+5", " 5", "5 ", "4294967296", "1e3", "٣"] {
        assert_eq!(u32s.read(bad), None, "{bad:?}");
    }
    let i8s = unpadded::<i8>();
    assert_eq!(i8s.write(&(-1i8).key_text()), "-1");
    assert_eq!(i8s.write(&i8::MIN.key_text()), "-128");
    assert_eq!(i8s.read("-128").as_deref(), Some("-000"));
    for bad in ["-0", "-129", "128", "-01", "--1"] {
        assert_eq!(i8s.read(bad), None, "{bad:?}");
    }
    assert_eq!(unpadded::<i128>().write(&i128::MIN.key_text()), i128::MIN.to_string());
    assert_eq!(unpadded::<u128>().write(&u128::MAX.key_text()), u128::MAX.to_string());
    assert!(!u32s.ordered() && u32s.lossless() && !u32s.is_verbatim());
    assert_eq!(u32s.name(), "unpadded");
}

#[test]
fn iso8601_examples() {
    let text = "20260105T100000.056758219Z";
    let ms = iso(Precision::Millis, true);
    assert_eq!(ms.write(text), "2026-01-05t10:00:00.056z");
    assert_eq!(ms.read("2026-01-05t10:00:00.056z").as_deref(), Some("20260105T100000.056000000Z"));
    assert_eq!(ms.name(), "iso8601(ms):lower");
    assert!(ms.is_verbatim() && ms.ordered() && !ms.lossless());
    assert_eq!(iso(Precision::Seconds, false).write(text), "2026-01-05T10:00:00Z");
    assert_eq!(iso(Precision::Nanos, false).write(text), "2026-01-05T10:00:00.056758219Z");
    // Years outside 0 to 9999 keep chrono's sign.
    assert_eq!(
        iso(Precision::Millis, false).write("+100000101T000000.000000000Z"),
        "+10000-01-01T00:00:00.000Z"
    );
    for bad in [
        "2026-01-05T10:00:00.056z",
        "2026-01-05t10:00:00.056",
        "2026-01-05t10:00:00.05z",
        "2026-01-05t10:00:00z",
        "2026-01-05 10:00:00.056z",
        "2026-1-05t10:00:00.056z",
        "2026-01-05t10:00.056z",
        "2026/01/05t10:00:00.056z",
        "x2026-01-05t10:00:00.056z",
        "t10:00:00.056z",
        "",
    ] {
        assert_eq!(ms.read(bad), None, "{bad:?}");
    }
}

#[cfg(feature = "chrono")]
#[test]
fn iso8601_reads_back_datetimes() {
    use chrono::{DateTime, TimeZone, Utc};
    let t: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 1, 5, 10, 0, 13).unwrap()
        + chrono::Duration::nanoseconds(56_758_219);
    let ms = iso8601::<DateTime<Utc>>(Precision::Millis);
    let written = ms.write(&t.key_text()).into_owned();
    assert_eq!(written, t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let back: DateTime<Utc> = read_value(ms, &written).unwrap();
    assert_eq!(back, t - chrono::Duration::nanoseconds(758_219));
    // Out-of-range fields are the type's to refuse.
    assert!(read_value::<DateTime<Utc>>(ms, "2026-13-05T10:00:00.000Z").is_none());
    assert!(read_value::<DateTime<Utc>>(ms, "+2026-01-05T10:00:00.000Z").is_none());
}

#[test]
fn lower_examples() {
    let lower = super::text::<String>().lower();
    assert_eq!(lower.write("Ups-06"), "ups-06");
    assert_eq!(lower.read("ups-06").as_deref(), Some("ups-06"));
    assert_eq!(lower.read("Ups-06"), None);
    assert_eq!(lower.name(), "lower");
    assert_eq!(super::text::<String>().upper().verbatim().name(), "upper");
    assert!(super::text::<String>().upper().verbatim().is_verbatim());
}
