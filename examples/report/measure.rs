//! Rows of the report: measuring one access pattern (requests from the request counter,
//! items read, wall time) and printing sections as markdown tables.

use std::fmt::Write as _;
use std::future::Future;
use std::time::{Duration, Instant};

use ddb_model::{Db, Error, RequestStats, Table};

/// One access pattern, measured.
pub struct Row {
    /// What the caller wants ("query: one sort-key level").
    pub pattern: String,
    /// The call that does it, as code.
    pub call: String,
    /// How many times the call ran (the numbers below are per call).
    pub runs: u32,
    /// Requests of all runs, by operation.
    pub requests: RequestStats,
    /// Items returned to the caller, all runs.
    pub items: u64,
    /// Wall time of all runs.
    pub elapsed: Duration,
    /// The fewest requests one call can send (see `why`).
    pub min: u64,
    /// The requests one call is expected to send: `min`, unless `why` explains the excess.
    pub expected: u64,
    /// Why `min` is the minimum (and why `expected` exceeds it, when it does).
    pub why: String,
}

impl Row {
    /// Requests of one call.
    pub fn per_call(&self) -> f64 {
        self.requests.total() as f64 / f64::from(self.runs.max(1))
    }

    /// True when every call sent exactly the expected number of requests.
    pub fn as_expected(&self) -> bool {
        self.requests.total() == self.expected * u64::from(self.runs)
    }
}

/// The measurements of one call, before it is described as a row.
pub struct Measured {
    runs: u32,
    requests: RequestStats,
    items: u64,
    elapsed: Duration,
}

impl Measured {
    /// Describes the measurement: `min` requests per call is the minimum, for the reason
    /// `why`; the call is expected to send exactly that many.
    pub fn row(self, pattern: &str, call: &str, min: u64, why: &str) -> Row {
        self.row_over(pattern, call, min, min, why)
    }

    /// As [`row`](Self::row), for a call that sends `expected` requests, more than `min`:
    /// `why` must say why.
    pub fn row_over(self, pattern: &str, call: &str, min: u64, expected: u64, why: &str) -> Row {
        Row {
            pattern: pattern.to_owned(),
            call: call.to_owned(),
            runs: self.runs,
            requests: self.requests,
            items: self.items,
            elapsed: self.elapsed,
            min,
            expected,
            why: why.to_owned(),
        }
    }
}

/// Runs `call(i)` for `i` in `0..runs`, one after another, and measures the requests sent
/// through `db` (and its clones), the items the calls returned, and the wall time. Work done
/// before `measure` (populating, preparing) is not counted.
pub async fn measure<T, F, Fut>(db: &Db<T>, runs: u32, mut call: F) -> Result<Measured, Error>
where
    T: Table,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<usize, Error>>,
{
    let before = db.requests();
    let start = Instant::now();
    let mut items = 0u64;
    for i in 0..runs {
        items += call(i).await? as u64;
    }
    let elapsed = start.elapsed();
    Ok(Measured { runs, requests: db.requests() - before, items, elapsed })
}

/// A titled group of rows: one markdown table.
pub struct Section {
    pub title: String,
    /// Text printed between the title and the table: the workload.
    pub intro: String,
    pub rows: Vec<Row>,
}

impl Section {
    pub fn new(title: impl Into<String>, intro: impl Into<String>) -> Self {
        Section { title: title.into(), intro: intro.into(), rows: Vec::new() }
    }

    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// The section as markdown: a heading, the workload, the table, and a numbered note per
    /// row saying why its minimum is the minimum.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "### {}\n\n{}\n", self.title, self.intro);
        out.push_str(
            "| # | access pattern | call | requests per call | minimum | items returned \
             | items read | time per call |\n",
        );
        out.push_str("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
        for (i, row) in self.rows.iter().enumerate() {
            let runs = u64::from(row.runs.max(1));
            let flag = if row.as_expected() {
                if row.expected > row.min { " (see note)" } else { "" }
            } else {
                " **UNEXPECTED**"
            };
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {}{} | {} | {} | {} | {} |",
                i + 1,
                row.pattern,
                row.call,
                requests_text(&row.requests, row.runs),
                flag,
                row.min,
                number(row.items as f64 / runs as f64),
                number(row.requests.items_read() as f64 / runs as f64),
                duration(row.elapsed / row.runs.max(1)),
            );
        }
        out.push('\n');
        for (i, row) in self.rows.iter().enumerate() {
            match self.rows[..i].iter().position(|earlier| earlier.why == row.why) {
                Some(first) => {
                    let _ = writeln!(out, "{}. As {}.", i + 1, first + 1);
                }
                None => {
                    let _ = writeln!(out, "{}. {}", i + 1, row.why);
                }
            }
        }
        out
    }
}

/// `1 (Query)`, `2 (TransactWriteItems 1, GetItem 1)`: requests per call, by operation.
fn requests_text(stats: &RequestStats, runs: u32) -> String {
    let runs = f64::from(runs.max(1));
    let total = number(stats.total() as f64 / runs);
    let ops: Vec<(String, f64)> =
        stats.iter().map(|(op, n)| (op.name().to_owned(), n as f64 / runs)).collect();
    match ops.as_slice() {
        [] => total,
        [(op, _)] => format!("{total} ({op})"),
        many => {
            let parts: Vec<String> =
                many.iter().map(|(op, n)| format!("{op} {}", number(*n))).collect();
            format!("{total} ({})", parts.join(", "))
        }
    }
}

/// An integer as is, anything else with two decimals.
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x:.2}") }
}

fn duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.0} µs") }
}
