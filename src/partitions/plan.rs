//! The partition plan behind `sanitize_partitions(source_prefix, ...)`,
//! `sanitize_pipeline` and `sanitize_latest_registry`: the Hive date/hour plan of a
//! partitioned lake (the seed's Example 7 "Pipeline Flow"), one row per
//! logical partition in time order, with what discovery found under each.
//! Planning is pure ([`plan`]); discovery lists local directories or remote
//! prefixes ([`discover`]).

use crate::error::{Result, SanitizeError};
use crate::options::{InputFormat, InputMode, Options, ParamValue, RowParams};
use crate::source::{list_partition_dirs, Listing, Names};
use crate::value::calendar::{civil_from_days, days_from_civil};

pub const FUNCTION: &str = "sanitize_partitions";

/// The named parameters, in documentation order.
pub const PARAMETERS: &[&str] = &[
    "start_date",
    "end_date",
    "granularity",
    "start_hour",
    "end_hour",
    "partition_template",
    "input_format",
    "input_mode",
    "output_prefix",
    "output_file_stem",
    "validate_extension",
    "compression",
];

/// More partitions than this is a bind error: a typo in a date, not a plan.
const MAX_PARTITIONS: usize = 100_000;

const DAILY_TEMPLATE: &str = "year={yyyy}/month={mm}/date={yyyy}-{mm}-{dd}";

pub(crate) use crate::options::Granularity;

/// The parsed parameters of a plan.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Days since 1970-01-01, inclusive.
    pub start_day: i64,
    pub end_day: i64,
    pub granularity: Granularity,
    pub start_hour: u32,
    pub end_hour: u32,
    pub template: String,
    pub format: InputFormat,
    pub mode: InputMode,
    pub output_prefix: Option<String>,
    pub output_file_stem: String,
    /// Which file names the format takes (extension, compression suffix).
    pub names: Names,
}

/// One logical partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// `year=2026/month=06/date=2026-06-25[/hour=08]`.
    pub key: String,
    /// The partition's directory under the source prefix (ends with `/`).
    pub source_path: String,
    pub output_path: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ready,
    /// No such directory or prefix.
    Missing,
    /// No file with the format's extension, or only empty ones.
    Empty,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::Missing => "missing",
            Status::Empty => "empty",
        }
    }
}

/// What discovery found in one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The files with the format's extension (direct children), sorted.
    pub files: Vec<String>,
    pub bytes: u64,
    pub status: Status,
}

fn bad(parameter: &str, why: impl std::fmt::Display) -> SanitizeError {
    SanitizeError::options(format!("{FUNCTION}: the \"{parameter}\" parameter {why}"))
}

fn text(parameter: &str, v: &ParamValue) -> Result<String> {
    match v {
        ParamValue::Str(s) => Ok(s.clone()),
        other => Err(bad(parameter, format!("must be a VARCHAR, not {}", other.describe()))),
    }
}

/// A DATE parameter (DuckDB hands DATE values over as `YYYY-MM-DD` text).
fn date(parameter: &str, v: &ParamValue) -> Result<i64> {
    let s = text(parameter, v).map_err(|_| bad(parameter, format!("must be a DATE, not {}", v.describe())))?;
    let parts: Vec<&str> = s.trim().split('-').collect();
    let parsed = match parts.as_slice() {
        [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
            match (y.parse::<i64>(), m.parse::<u32>(), d.parse::<u32>()) {
                (Ok(y), Ok(m), Ok(d)) => days_from_civil(y, m, d),
                _ => None,
            }
        }
        _ => None,
    };
    parsed.ok_or_else(|| bad(parameter, format!("must be a DATE (YYYY-MM-DD), not '{s}'")))
}

fn hour(parameter: &str, v: &ParamValue) -> Result<u32> {
    let n = match v {
        ParamValue::Int(n) => Some(*n),
        ParamValue::Str(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    match n {
        Some(n @ 0..=23) => Ok(n as u32),
        Some(n) => Err(bad(parameter, format!("must be an hour from 0 to 23, not {n}"))),
        None => Err(bad(parameter, format!("must be an INTEGER hour from 0 to 23, not {}", v.describe()))),
    }
}

impl PlanOptions {
    /// Parses the named parameters (NULL ones are absent).
    pub fn parse(params: &[(&str, ParamValue)]) -> Result<PlanOptions> {
        let p = RowParams::new(FUNCTION, params);
        let get = |name: &str| p.get(name);
        let start_day = date("start_date", get("start_date").ok_or_else(|| bad("start_date", "is required"))?)?;
        let end_day = date("end_date", get("end_date").ok_or_else(|| bad("end_date", "is required"))?)?;
        if end_day < start_day {
            return Err(bad("end_date", "is before start_date"));
        }
        let granularity = p.choice::<Granularity>("granularity")?.unwrap_or(Granularity::Daily);
        let (start_hour, end_hour) = match granularity {
            Granularity::Daily => {
                for name in ["start_hour", "end_hour"] {
                    if get(name).is_some() {
                        return Err(bad(name, "is valid only with granularity := 'hourly'"));
                    }
                }
                (0, 0)
            }
            Granularity::Hourly => {
                let start = get("start_hour").map(|v| hour("start_hour", v)).transpose()?.unwrap_or(0);
                let end = get("end_hour").map(|v| hour("end_hour", v)).transpose()?.unwrap_or(23);
                if end < start {
                    return Err(bad("end_hour", "is before start_hour"));
                }
                (start, end)
            }
        };
        let template = template(get("partition_template"), granularity)?;
        let format_name = p
            .text("input_format")?
            .ok_or_else(|| bad("input_format", "is required (the format decides which files a partition holds)"))?;
        let options = Options::parse(FUNCTION, None, &forwarded(params, &format_name))
            .map_err(|e| SanitizeError::options(e.message))?;
        let output_prefix = p.text("output_prefix")?;
        let output_file_stem = p.text("output_file_stem")?;
        let output_file_stem = output_file_stem.unwrap_or_else(|| "part".to_string());
        if output_file_stem.is_empty() || output_file_stem.contains('/') {
            return Err(bad("output_file_stem", "must be a non-empty file name without '/'"));
        }
        let days = (end_day - start_day + 1) as usize;
        let per_day = if granularity == Granularity::Hourly { (end_hour - start_hour + 1) as usize } else { 1 };
        if days.saturating_mul(per_day) > MAX_PARTITIONS {
            return Err(bad(
                "end_date",
                format!(
                    "makes a plan of {} partitions, more than {MAX_PARTITIONS}; narrow the dates",
                    days.saturating_mul(per_day)
                ),
            ));
        }
        Ok(PlanOptions {
            start_day,
            end_day,
            granularity,
            start_hour,
            end_hour,
            template,
            format: options.input_format,
            mode: options.input_mode,
            output_prefix,
            output_file_stem,
            names: Names::of(&options),
        })
    }
}

/// The parameters a scan would take too (format, mode, extension rules),
/// parsed by the scan's own option parser so they mean the same.
fn forwarded<'a>(params: &[(&'a str, ParamValue)], format: &str) -> Vec<(&'a str, ParamValue)> {
    let mut out: Vec<(&str, ParamValue)> = params
        .iter()
        .filter(|(n, _)| matches!(*n, "input_mode" | "validate_extension" | "compression"))
        .cloned()
        .collect();
    out.insert(0, ("input_format", ParamValue::Str(format.to_string())));
    out
}

/// The `partition_template` parameter, checked; by default the seed's
/// daily layout, plus `/hour={hh}` when hourly.
fn template(v: Option<&ParamValue>, granularity: Granularity) -> Result<String> {
    let template = match v {
        Some(v) => text("partition_template", v)?,
        None if granularity == Granularity::Hourly => format!("{DAILY_TEMPLATE}/hour={{hh}}"),
        None => DAILY_TEMPLATE.to_string(),
    };
    check_template(&template, granularity)?;
    Ok(template)
}

/// A template names each placeholder it uses from `{yyyy}`, `{mm}`, `{dd}`
/// and `{hh}`; it must place the day, and the hour when hourly.
fn check_template(template: &str, granularity: Granularity) -> Result<()> {
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(bad("partition_template", format!("has an unclosed '{{' in '{template}'")));
        };
        let name = &rest[open + 1..open + close];
        if !matches!(name, "yyyy" | "mm" | "dd" | "hh") {
            return Err(bad(
                "partition_template",
                format!("has an unknown placeholder {{{name}}}; use {{yyyy}}, {{mm}}, {{dd}} and {{hh}}"),
            ));
        }
        if name == "hh" && granularity == Granularity::Daily {
            return Err(bad("partition_template", "uses {hh}, which needs granularity := 'hourly'"));
        }
        rest = &rest[open + close + 1..];
    }
    if !template.contains("{dd}") {
        return Err(bad("partition_template", format!("must place the day with {{dd}}: '{template}'")));
    }
    if granularity == Granularity::Hourly && !template.contains("{hh}") {
        return Err(bad("partition_template", format!("must place the hour with {{hh}} when hourly: '{template}'")));
    }
    if template.starts_with('/') || template.ends_with('/') || template.contains("//") {
        return Err(bad("partition_template", format!("must be relative, without empty segments: '{template}'")));
    }
    // A `..` would put a partition outside the prefixes (the output
    // written, the source read elsewhere); a `.` names the same directory
    // under another key. A backslash is a separator on Windows.
    if template.split(['/', '\\']).any(|segment| segment == ".." || segment == ".") {
        return Err(bad(
            "partition_template",
            format!("must stay below the prefixes, without '.' or '..' segments: '{template}'"),
        ));
    }
    Ok(())
}

fn fill(template: &str, (y, m, d): (i64, u32, u32), h: u32) -> String {
    template
        .replace("{yyyy}", &format!("{y:04}"))
        .replace("{mm}", &format!("{m:02}"))
        .replace("{dd}", &format!("{d:02}"))
        .replace("{hh}", &format!("{h:02}"))
}

/// The partitions of a plan, in time order.
pub fn plan(source_prefix: &str, o: &PlanOptions) -> Vec<Partition> {
    let source = source_prefix.trim_end_matches('/');
    let output = o.output_prefix.as_deref().map(|p| p.trim_end_matches('/'));
    let hours: Vec<u32> = match o.granularity {
        Granularity::Daily => vec![0],
        Granularity::Hourly => (o.start_hour..=o.end_hour).collect(),
    };
    let mut out = Vec::new();
    for day in o.start_day..=o.end_day {
        let ymd = civil_from_days(day);
        for &h in &hours {
            let key = fill(&o.template, ymd, h);
            let stamp = match o.granularity {
                Granularity::Daily => format!("{:04}{:02}{:02}", ymd.0, ymd.1, ymd.2),
                Granularity::Hourly => format!("{:04}{:02}{:02}_{h:02}", ymd.0, ymd.1, ymd.2),
            };
            out.push(Partition {
                source_path: format!("{source}/{key}/"),
                output_path: output.map(|p| format!("{p}/{key}/{}_{stamp}.parquet", o.output_file_stem)),
                key,
            });
        }
    }
    out
}

/// What each partition holds: its files with the format's extension (direct
/// children only, as directory mode reads them) and their bytes. In
/// `single_file` mode a partition may hold one such file at most.
pub fn discover(partitions: &[Partition], o: &PlanOptions) -> Result<Vec<Found>> {
    let dirs: Vec<String> = partitions.iter().map(|p| p.source_path.clone()).collect();
    let listings = list_partition_dirs(&dirs).map_err(|e| e.in_function(FUNCTION))?;
    let mut found = Vec::with_capacity(partitions.len());
    for (p, listing) in partitions.iter().zip(listings) {
        found.push(judge(p, listing, o)?);
    }
    Ok(found)
}

fn judge(p: &Partition, listing: Option<Listing>, o: &PlanOptions) -> Result<Found> {
    let Some(listing) = listing else {
        return Ok(Found { files: Vec::new(), bytes: 0, status: Status::Missing });
    };
    let mut files: Vec<(String, u64)> = listing.files.into_iter().filter(|(name, _)| o.names.takes(name)).collect();
    files.sort();
    if o.mode == InputMode::SingleFile && files.len() > 1 {
        return Err(SanitizeError::input(format!(
            "{FUNCTION}: partition {} holds {} {} files (\"{}\"); pass input_mode := 'directory' to read them all as one partition",
            p.key,
            files.len(),
            o.format.extensions().join(" or "),
            p.source_path
        )));
    }
    let bytes = files.iter().map(|(_, n)| n).sum();
    let status = if bytes == 0 { Status::Empty } else { Status::Ready };
    Ok(Found { files: files.into_iter().map(|(name, _)| name).collect(), bytes, status })
}

/// What the prefix holds when none of a plan's partitions exists: the
/// `key=value` directories at its head (most likely a layout the template
/// does not describe), and a template that reads the first of them, or
/// that they do follow the template but lie outside the plan's dates.
/// Empty when the prefix holds no such directory (or cannot be listed: the
/// caller's error stands without the hint).
pub fn layout_hint(source_prefix: &str, o: &PlanOptions) -> String {
    let Ok(files) = crate::source::list_tree(source_prefix) else { return String::new() };
    let shown = crate::source::display_uri(source_prefix);
    let roots = [
        crate::source::file_uri_path(source_prefix).unwrap_or(source_prefix).trim_end_matches('/').to_string(),
        shown.trim_end_matches('/').to_string(),
    ];
    let mut dirs: Vec<String> = files
        .iter()
        .filter_map(|file| roots.iter().find_map(|r| file.strip_prefix(r.as_str())))
        .filter_map(|relative| {
            // The run of key=value directories the file's path starts with.
            let segments: Vec<&str> = relative.trim_start_matches('/').split('/').collect();
            let dirs = &segments[..segments.len().saturating_sub(1)];
            let hive =
                dirs.iter().take_while(|d| d.split_once('=').is_some_and(|(k, v)| !k.is_empty() && !v.is_empty()));
            let joined = hive.copied().collect::<Vec<_>>().join("/");
            (!joined.is_empty()).then_some(joined)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    let Some(first) = dirs.first() else { return String::new() };
    let mut listed = dirs.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if dirs.len() > 3 {
        listed.push_str(&format!(" and {} more", dirs.len() - 3));
    }
    let matcher = template_regex(&o.template);
    if dirs.iter().any(|d| match_key(&matcher, d).is_some()) {
        let last = dirs.iter().rev().find(|d| match_key(&matcher, d).is_some()).unwrap_or(first);
        let first = dirs.iter().find(|d| match_key(&matcher, d).is_some()).unwrap_or(first);
        return format!(
            "; the prefix holds partitions of this template from {first} to {last}, none of them between start_date and end_date"
        );
    }
    let suggestion = template_of(first).map_or(String::new(), |t| {
        let hourly = if t.contains("{hh}") && o.granularity == Granularity::Daily {
            " with granularity := 'hourly'"
        } else {
            ""
        };
        format!(", such as partition_template := '{t}'{hourly}")
    });
    format!(
        "; the prefix holds the key=value directories {listed}, which partition_template '{}' does not describe: pass a partition_template that does{suggestion}",
        o.template
    )
}

/// A template that reads the partition directory `dir` (`dt=2026-06-01`,
/// `year=2026/month=06/day=01`), where its values are dates or their
/// parts; `None` when one is not, or no day is placed.
fn template_of(dir: &str) -> Option<String> {
    let digits = |v: &str, n: usize| v.len() == n && v.bytes().all(|b| b.is_ascii_digit());
    let mut segments = Vec::new();
    for segment in dir.split('/') {
        let (key, value) = segment.split_once('=')?;
        let lower = key.to_ascii_lowercase();
        let placed = match value.split('-').collect::<Vec<_>>().as_slice() {
            [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2) => "{yyyy}-{mm}-{dd}",
            [v] if digits(v, 8) => "{yyyy}{mm}{dd}",
            [v] if digits(v, 4) && matches!(lower.as_str(), "year" | "yyyy" | "y") => "{yyyy}",
            [v] if digits(v, 2) && matches!(lower.as_str(), "month" | "mm" | "m") => "{mm}",
            [v] if digits(v, 2) && matches!(lower.as_str(), "day" | "dd" | "d") => "{dd}",
            [v] if digits(v, 2) && matches!(lower.as_str(), "hour" | "hh" | "hr" | "h") => "{hh}",
            _ => return None,
        };
        segments.push(format!("{key}={placed}"));
    }
    let template = segments.join("/");
    template.contains("{dd}").then_some(template)
}

/// `sanitize_latest_registry(output_prefix, ...)`: its named parameters.
pub const LATEST_PARAMETERS: &[&str] = &["partition_template", "granularity"];

pub const LATEST_FUNCTION: &str = "sanitize_latest_registry";

/// The newest partition under `output_prefix` (by the template's date and
/// hour) whose Parquet file carries a registry in its footer: (partition
/// key, file, registry). Newer partitions without one are passed over; the
/// files of one partition are tried from the last name back. Lists, then
/// reads footers only. (`sanitize_latest_registry` first looks for a
/// `sanitize_ingest` checkpoint: functions/sanitize_partitions.rs.)
pub fn latest_in_layout(
    output_prefix: &str,
    params: &[(&str, ParamValue)],
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<Option<(String, String, String)>> {
    let p = RowParams::new(LATEST_FUNCTION, params);
    let in_latest = |e: SanitizeError| SanitizeError::options(e.message.replace(FUNCTION, LATEST_FUNCTION));
    let granularity = p.choice::<Granularity>("granularity")?.unwrap_or(Granularity::Daily);
    let template = template(p.get("partition_template"), granularity).map_err(in_latest)?;
    let matcher = template_regex(&template);
    // Listed files are named as shown, without any userinfo (source/redact.rs).
    let shown = crate::source::display_uri(output_prefix);
    let root = shown.trim_end_matches('/');
    let mut candidates: Vec<(Stamp, String, String)> = Vec::new();
    for file in crate::source::list_tree(output_prefix).map_err(|e| e.in_function(LATEST_FUNCTION))? {
        let Some(relative) = file.strip_prefix(root).map(|r| r.trim_start_matches('/')) else { continue };
        let Some((dir, name)) = relative.rsplit_once('/') else { continue };
        if !name.to_ascii_lowercase().ends_with(".parquet") {
            continue;
        }
        if let Some(stamp) = match_key(&matcher, dir) {
            candidates.push((stamp, name.to_string(), file.clone()));
        }
    }
    // Newest first: by (year, month, day, hour), then file name.
    candidates.sort();
    for (_, _, file) in candidates.into_iter().rev() {
        if let Some(registry) =
            crate::output::registry_from_parquet_with(&file, opener).map_err(|e| e.in_function(LATEST_FUNCTION))?
        {
            let key = file.strip_prefix(root).unwrap_or(&file).trim_start_matches('/');
            let key = key.rsplit_once('/').map_or(key, |(dir, _)| dir).to_string();
            return Ok(Some((key, file, registry)));
        }
    }
    Ok(None)
}

/// A partition's (year, month, day, hour) as zero-padded text: text order is time order.
type Stamp = (String, String, String, String);

/// A template as an anchored regex: each placeholder a numbered digit group
/// (a placeholder used twice must match the same digits: checked by
/// [`match_key`]).
fn template_regex(template: &str) -> (regex::Regex, Vec<&'static str>) {
    let mut pattern = String::from("^");
    let mut order = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        pattern.push_str(&regex::escape(&rest[..open]));
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        let (name, digits): (&'static str, usize) = match &rest[open + 1..close] {
            "yyyy" => ("yyyy", 4),
            "mm" => ("mm", 2),
            "dd" => ("dd", 2),
            _ => ("hh", 2),
        };
        pattern.push_str(&format!("([0-9]{{{digits}}})"));
        order.push(name);
        rest = &rest[(close + 1).min(rest.len())..];
    }
    pattern.push_str(&regex::escape(rest));
    pattern.push('$');
    (regex::Regex::new(&pattern).unwrap_or_else(|_| regex::Regex::new("^$").expect("a valid regex")), order)
}

/// The (year, month, day, hour) of a partition directory that matches the
/// template, as zero-padded text (so that text order is time order).
fn match_key(matcher: &(regex::Regex, Vec<&'static str>), dir: &str) -> Option<Stamp> {
    let caps = matcher.0.captures(dir)?;
    let mut found: [Option<&str>; 4] = [None; 4];
    for (i, name) in matcher.1.iter().enumerate() {
        let value = caps.get(i + 1)?.as_str();
        let slot = match *name {
            "yyyy" => 0,
            "mm" => 1,
            "dd" => 2,
            _ => 3,
        };
        match found[slot] {
            Some(seen) if seen != value => return None,
            _ => found[slot] = Some(value),
        }
    }
    let [y, m, d, h] = found.map(|v| v.unwrap_or("00").to_string());
    Some((y, m, d, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> ParamValue {
        ParamValue::Str(v.to_string())
    }

    fn options(extra: &[(&'static str, ParamValue)]) -> Result<PlanOptions> {
        // The first of a name wins: the test's own values, then the defaults.
        let mut params = extra.to_vec();
        params.extend([("start_date", s("2026-06-29")), ("end_date", s("2026-07-01")), ("input_format", s("jsonl"))]);
        PlanOptions::parse(&params)
    }

    #[test]
    fn daily_plan_crosses_a_month_in_order() {
        let o = options(&[("output_prefix", s("s3://silver/events/"))]).unwrap();
        let p = plan("gs://bronze/events/", &o);
        let keys: Vec<&str> = p.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "year=2026/month=06/date=2026-06-29",
                "year=2026/month=06/date=2026-06-30",
                "year=2026/month=07/date=2026-07-01"
            ]
        );
        assert_eq!(p[0].source_path, "gs://bronze/events/year=2026/month=06/date=2026-06-29/");
        assert_eq!(
            p[2].output_path.as_deref(),
            Some("s3://silver/events/year=2026/month=07/date=2026-07-01/part_20260701.parquet")
        );
    }

    #[test]
    fn hourly_plan_with_hours_and_a_custom_template() {
        let o = options(&[
            ("granularity", s("hourly")),
            ("start_hour", ParamValue::Int(22)),
            ("partition_template", s("dt={yyyy}{mm}{dd}/hr={hh}")),
            ("output_prefix", s("/out")),
            ("output_file_stem", s("events")),
        ])
        .unwrap();
        let p = plan("/lake", &o);
        assert_eq!(p.len(), 6, "22 and 23 on three days");
        assert_eq!(p[0].key, "dt=20260629/hr=22");
        assert_eq!(p[5].key, "dt=20260701/hr=23");
        assert_eq!(p[5].output_path.as_deref(), Some("/out/dt=20260701/hr=23/events_20260701_23.parquet"));
        let default_hourly = options(&[("granularity", s("hourly"))]).unwrap();
        let p = plan("/lake", &default_hourly);
        assert_eq!(p.len(), 72);
        assert_eq!(p[8].key, "year=2026/month=06/date=2026-06-29/hour=08");
    }

    #[test]
    fn bad_parameters_are_bind_errors_naming_the_parameter() {
        let cases: Vec<(Vec<(&'static str, ParamValue)>, &str)> = vec![
            (vec![("end_date", s("2026-06-01"))], "\"end_date\" parameter is before start_date"),
            (vec![("start_hour", ParamValue::Int(3))], "\"start_hour\" parameter is valid only with granularity"),
            (vec![("granularity", s("hourly")), ("end_hour", ParamValue::Int(24))], "hour from 0 to 23, not 24"),
            (
                vec![
                    ("granularity", s("hourly")),
                    ("start_hour", ParamValue::Int(5)),
                    ("end_hour", ParamValue::Int(4)),
                ],
                "\"end_hour\" parameter is before start_hour",
            ),
            (vec![("partition_template", s("year={yyyy}/month={mm}"))], "must place the day with {dd}"),
            (vec![("partition_template", s("d={yyyy}{mm}{dd}/{x}"))], "unknown placeholder {x}"),
            (vec![("partition_template", s("../../x/d={yyyy}{mm}{dd}"))], "without '.' or '..' segments"),
            (vec![("partition_template", s("d={yyyy}{mm}{dd}/.."))], "without '.' or '..' segments"),
            (vec![("partition_template", s("a/../d={yyyy}{mm}{dd}"))], "without '.' or '..' segments"),
            (vec![("partition_template", s("./d={yyyy}{mm}{dd}"))], "without '.' or '..' segments"),
            (vec![("partition_template", s("..\\d={yyyy}{mm}{dd}"))], "without '.' or '..' segments"),
            (vec![("granularity", s("hourly")), ("partition_template", s("d={dd}"))], "must place the hour"),
            (vec![("granularity", s("weekly"))], "must be one of 'daily', 'hourly', not 'weekly'"),
            (vec![("start_date", s("2026-13-01"))], "must be a DATE (YYYY-MM-DD), not '2026-13-01'"),
            (vec![("start_date", s("1700-01-01"))], "more than 100000"),
            (vec![("input_format", s("yaml"))], "input_format"),
            (vec![("output_file_stem", s("a/b"))], "output_file_stem"),
        ];
        for (extra, expected) in cases {
            let e = options(&extra).unwrap_err();
            assert!(e.message.contains(expected), "{extra:?}: {}", e.message);
            assert!(e.message.starts_with("sanitize_partitions: "), "{}", e.message);
        }
        let e = PlanOptions::parse(&[("end_date", s("2026-01-01")), ("input_format", s("csv"))]).unwrap_err();
        assert!(e.message.contains("\"start_date\" parameter is required"), "{}", e.message);
    }

    #[test]
    fn local_discovery_marks_ready_missing_and_empty() {
        let root = std::env::temp_dir().join(format!("ss-partitions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let day = |d: &str| root.join(format!("year=2026/month=06/date=2026-06-{d}"));
        std::fs::create_dir_all(day("29")).unwrap();
        std::fs::write(day("29").join("a.jsonl"), "{\"a\":1}\n").unwrap();
        std::fs::write(day("29").join("notes.txt"), "x").unwrap();
        std::fs::create_dir_all(day("30")).unwrap();
        std::fs::write(day("30").join("empty.jsonl"), "").unwrap();
        let o = options(&[]).unwrap();
        let partitions = plan(root.to_str().unwrap(), &o);
        let found = discover(&partitions, &o).unwrap();
        let statuses: Vec<Status> = found.iter().map(|f| f.status).collect();
        assert_eq!(statuses, [Status::Ready, Status::Empty, Status::Missing]);
        assert_eq!((found[0].files.len(), found[0].bytes), (1, 8));
        assert_eq!((found[1].files.len(), found[1].bytes), (1, 0));
        // Two files in single_file mode: an error pointing at directory mode.
        std::fs::write(day("29").join("b.jsonl"), "{\"a\":2}\n").unwrap();
        let e = discover(&partitions, &o).unwrap_err();
        assert!(e.message.contains("holds 2 .jsonl files") && e.message.contains("input_mode := 'directory'"), "{e}");
        let directory = options(&[("input_mode", s("directory"))]).unwrap();
        assert_eq!(discover(&partitions, &directory).unwrap()[0].files.len(), 2);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_partition_that_cannot_be_listed_is_an_error_not_missing() {
        // A file where the partition's directory should be: not "missing"
        // (that would skip its data in silence) but an error naming it.
        let root = std::env::temp_dir().join(format!("ss-partitions-unlistable-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("year=2026/month=06")).unwrap();
        std::fs::write(root.join("year=2026/month=06/date=2026-06-29"), "not a directory").unwrap();
        let o = options(&[("end_date", s("2026-06-29"))]).unwrap();
        let e = discover(&plan(root.to_str().unwrap(), &o), &o).unwrap_err();
        assert!(e.message.contains("cannot list directory") && e.message.contains("date=2026-06-29"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_a_partitions_file_and_a_link_cycle_ends() {
        let root = std::env::temp_dir().join(format!("ss-partitions-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let day = root.join("year=2026/month=06/date=2026-06-29");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(root.join("real.jsonl"), "{\"a\": 1}\n").unwrap();
        std::os::unix::fs::symlink(root.join("real.jsonl"), day.join("e.jsonl")).unwrap();
        // A link back up the tree: walking it must end.
        std::os::unix::fs::symlink(&root, day.join("loop")).unwrap();
        let o = options(&[("end_date", s("2026-06-29"))]).unwrap();
        let found = discover(&plan(root.to_str().unwrap(), &o), &o).unwrap();
        assert_eq!((found[0].status, found[0].files.len(), found[0].bytes), (Status::Ready, 1, 9));
        let files = crate::source::list_tree(root.to_str().unwrap()).unwrap();
        assert_eq!(files.iter().filter(|f| f.ends_with("e.jsonl")).count(), 1, "{files:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_lake_of_another_layout_is_named_with_a_template_that_reads_it() {
        let root = std::env::temp_dir().join(format!("ss-partitions-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["dt=2026-06-29", "dt=2026-06-30", "dt=2026-07-01", "dt=2026-07-02"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            std::fs::write(root.join(d).join("a.jsonl"), "{}\n").unwrap();
        }
        let o = options(&[]).unwrap();
        let hint = layout_hint(root.to_str().unwrap(), &o);
        assert_eq!(
            hint,
            "; the prefix holds the key=value directories dt=2026-06-29, dt=2026-06-30, dt=2026-07-01 and 1 more, which partition_template 'year={yyyy}/month={mm}/date={yyyy}-{mm}-{dd}' does not describe: pass a partition_template that does, such as partition_template := 'dt={yyyy}-{mm}-{dd}'"
        );
        // The template's own layout, outside the dates.
        let o = options(&[
            ("partition_template", s("dt={yyyy}-{mm}-{dd}")),
            ("start_date", s("2025-01-01")),
            ("end_date", s("2025-01-02")),
        ])
        .unwrap();
        assert_eq!(
            layout_hint(root.to_str().unwrap(), &o),
            "; the prefix holds partitions of this template from dt=2026-06-29 to dt=2026-07-02, none of them between start_date and end_date"
        );
        // Nothing hive-like: no hint.
        assert_eq!(layout_hint(root.join("dt=2026-06-29").to_str().unwrap(), &o), "");
        assert_eq!(layout_hint(root.join("nowhere").to_str().unwrap(), &o), "");
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(
            template_of("year=2026/month=06/day=01/hour=08").as_deref(),
            Some("year={yyyy}/month={mm}/day={dd}/hour={hh}")
        );
        assert_eq!(template_of("dt=20260601").as_deref(), Some("dt={yyyy}{mm}{dd}"));
        assert_eq!(template_of("region=eu"), None);
        assert_eq!(template_of("year=2026/month=06"), None);
    }

    #[test]
    fn template_keys_order_by_time_and_repeat_consistently() {
        let m = template_regex(DAILY_TEMPLATE);
        let key = |d: &str| match_key(&m, d);
        assert_eq!(
            key("year=2026/month=06/date=2026-06-25"),
            Some(("2026".into(), "06".into(), "25".into(), "00".into()))
        );
        assert_eq!(key("year=2026/month=07/date=2026-06-25"), None, "month and date disagree");
        assert_eq!(key("year=2026/month=06/date=2026-06-25/hour=01"), None, "anchored");
        let hourly = template_regex("dt={yyyy}{mm}{dd}/hr={hh}");
        assert!(match_key(&hourly, "dt=20261231/hr=23") > match_key(&hourly, "dt=20261231/hr=09"));
    }
}
