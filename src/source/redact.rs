//! What a URI shows. A URI may carry secrets in two places: its userinfo
//! (`http://user:password@host/x`) and, for `http(s)://`, its query string
//! (a presigned URL's `X-Amz-Signature`, an Azure SAS token). Requests use
//! the URI whole; everything a user or a file can see (messages,
//! `source_file`, `sanitize_stats()`, rejects, reports, Parquet files) uses
//! [`display_uri`], or [`redact_text`] for text that may quote a URI (a
//! storage client's error).
//!
//! The userinfo is dropped whole, as DuckDB shows such URLs: a user name
//! alone says little and may be a token itself. The exception is the Azure
//! schemes where it names the container (`abfss://container@account...`):
//! the container stays, a `:password` after it goes.

use std::borrow::Cow;

/// Schemes whose userinfo is a container name, not credentials.
const CONTAINER_USERINFO: [&str; 4] = ["abfs", "abfss", "wasb", "wasbs"];

/// `path` as messages and outputs show it: without the userinfo of a URI
/// and without the query (and fragment) of an `http(s)://` URL. Local
/// paths, and keys of object stores (where `?` is a character of the key),
/// are unchanged.
pub fn display_uri(path: &str) -> Cow<'_, str> {
    let Some((scheme, rest)) = split_scheme(path) else { return Cow::Borrowed(path) };
    match shown(scheme, rest) {
        None => Cow::Borrowed(path),
        Some(text) => Cow::Owned(format!("{scheme}://{text}")),
    }
}

/// `text` with every URI in it shown as [`display_uri`] shows it: for
/// messages that quote a URI they did not build (a storage client's error
/// naming the request's URL). A URI ends at white space, a quote, `<`, `>`,
/// or a `)` that closes the text around it.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut changed = false;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let at = search + found;
        let scheme_start = scheme_start(text, at);
        let after = at + 3;
        let end = after + uri_length(&text[after..]);
        if scheme_start < at {
            if let Some(shown) = shown(&text[scheme_start..at], &text[after..end]) {
                out.push_str(&text[copied..after]);
                out.push_str(&shown);
                copied = end;
                changed = true;
            }
        }
        search = end.max(after);
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A URI's scheme and what follows `://`, when it has a valid scheme.
fn split_scheme(path: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = path.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

/// Where the scheme ending at `colon` (the `:` of `://`) starts in `text`;
/// `colon` itself when there is none.
fn scheme_start(text: &str, colon: usize) -> usize {
    let bytes = text.as_bytes();
    let mut start = colon;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || matches!(bytes[start - 1], b'+' | b'-' | b'.')) {
        start -= 1;
    }
    // A scheme starts with a letter.
    while start < colon && !bytes[start].is_ascii_alphabetic() {
        start += 1;
    }
    start
}

/// The length of the URI text that starts right after `://` in running
/// text: up to white space, a quote, `<`, `>`, or a `)` followed by the
/// end, white space, punctuation or a quote (a URL in parentheses). A `)`
/// inside a query is kept, so no part of a secret is left behind.
fn uri_length(text: &str) -> usize {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' | b'\'' | b'`' | b'<' | b'>' => return i,
            b if b.is_ascii_whitespace() => return i,
            b')' => {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|n| n.is_ascii_whitespace() || matches!(n, b':' | b',' | b';' | b'.' | b'"' | b'\''))
                {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// What follows `scheme://`, shown; `None` when that is `rest` itself.
fn shown(scheme: &str, rest: &str) -> Option<String> {
    let lower = scheme.to_ascii_lowercase();
    let is_http = lower == "http" || lower == "https";
    // The authority ends at the path; for a URL also at its query or fragment.
    let authority_end = rest.find(|c| c == '/' || (is_http && (c == '?' || c == '#'))).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = match authority.rfind('@') {
        None => Cow::Borrowed(authority),
        Some(at) if CONTAINER_USERINFO.contains(&lower.as_str()) => {
            let container = authority[..at].split(':').next().unwrap_or_default();
            Cow::Owned(format!("{container}@{}", &authority[at + 1..]))
        }
        Some(at) => Cow::Borrowed(&authority[at + 1..]),
    };
    let tail = match tail.find(['?', '#']) {
        Some(q) if is_http => &tail[..q],
        _ => tail,
    };
    let unchanged = host.len() == authority.len() && authority.len() + tail.len() == rest.len();
    (!unchanged).then(|| format!("{host}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_and_url_queries_are_never_shown() {
        assert_eq!(display_uri("http://user:s3cret@127.0.0.1:8080/raw/x.jsonl"), "http://127.0.0.1:8080/raw/x.jsonl");
        assert_eq!(display_uri("https://token@h/x.csv?X-Amz-Signature=abc&X-Amz-Expires=60"), "https://h/x.csv");
        assert_eq!(display_uri("HTTPS://h/x.csv#frag"), "HTTPS://h/x.csv");
        assert_eq!(display_uri("https://h?sig=1"), "https://h");
        assert_eq!(display_uri("s3://key:secret@lake/raw/a.jsonl"), "s3://lake/raw/a.jsonl");
        assert_eq!(display_uri("gs://u:p@lake/a.csv"), "gs://lake/a.csv");
        assert_eq!(display_uri("az://u:p@lake/a.csv"), "az://lake/a.csv");
        // A password with an '@' of its own: everything to the last '@' goes.
        assert_eq!(display_uri("http://u:p@ss@h/x"), "http://h/x");
    }

    #[test]
    fn what_is_not_a_secret_is_shown_as_written() {
        for path in [
            "/data/raw/x.jsonl",
            "data/a@b.jsonl",
            "file:///data/x.csv",
            "http://127.0.0.1:8080/raw/x.jsonl",
            // In an object key `?` and `@` are characters of the key.
            "s3://b/what?.jsonl",
            "s3://b/user@example.com/x.jsonl",
            "gcs://b/logs~2024 v1.jsonl",
            "abfss://c@acct.dfs.core.windows.net/a/b.json",
            "wasbs://c@acct.blob.core.windows.net/a.json",
        ] {
            assert!(matches!(display_uri(path), Cow::Borrowed(p) if p == path), "{path}");
        }
        // The container of an Azure URI stays; a password after it goes.
        assert_eq!(
            display_uri("abfss://c:secret@acct.dfs.core.windows.net/a.json"),
            "abfss://c@acct.dfs.core.windows.net/a.json"
        );
    }

    #[test]
    fn uris_quoted_in_text_lose_their_secrets() {
        assert_eq!(
            redact_text("error sending request for url (https://h/x.csv?sig=s3cret): connection refused"),
            "error sending request for url (https://h/x.csv): connection refused"
        );
        assert_eq!(
            redact_text("cannot download \"http://u:pw@h:1/x.jsonl\" (HTTP) and 's3://k:v@b/y' too"),
            "cannot download \"http://h:1/x.jsonl\" (HTTP) and 's3://b/y' too"
        );
        // A ')' inside a query is not its end.
        assert_eq!(redact_text("GET https://h/x?a=(b)c&sig=zz failed"), "GET https://h/x failed");
        assert_eq!(redact_text("at https://h/x?sig=1"), "at https://h/x");
        let plain = "no uri here, nor a://";
        assert!(matches!(redact_text(plain), Cow::Borrowed(p) if p == plain));
        let clean = "cannot list \"s3://lake/raw\" (S3): 403";
        assert!(matches!(redact_text(clean), Cow::Borrowed(p) if p == clean));
        // Several in one text, separated by a list's comma.
        assert_eq!(redact_text("http://a:b@h/1.jsonl, http://h/2.jsonl?x=y"), "http://h/1.jsonl, http://h/2.jsonl");
    }

    #[test]
    fn display_and_text_agree_on_a_lone_uri() {
        for uri in [
            "http://user:pw@h/x.jsonl?sig=1",
            "s3://a:b@lake/k.jsonl",
            "abfs://c:pw@acct.dfs.core.windows.net/k",
            "https://acct.blob.core.windows.net/c/x.csv?sv=1&sig=s",
        ] {
            assert_eq!(redact_text(uri), display_uri(uri), "{uri}");
        }
    }
}
