//! Remote object URIs: which backend a path names, and where the object
//! lies within it. Pure parsing; [`super::spool`] does the I/O.

/// The backend of a remote path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    S3,
    Gcs,
    Azure,
    Http,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::S3 => "S3",
            Backend::Gcs => "GCS",
            Backend::Azure => "Azure Blob Storage",
            Backend::Http => "HTTP",
        }
    }
}

/// A remote path split into the store it lives in and the key within it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteUri {
    pub backend: Backend,
    /// What the store is built from, in the form object_store accepts:
    /// `s3://bucket`, `gs://bucket`, `az://container`,
    /// `abfss://container@account.dfs.core.windows.net`,
    /// `https://account.blob.core.windows.net/container`, `https://host:port`.
    pub store_url: String,
    /// How the user wrote the store part, for `source_file` and messages
    /// (`gcs://bucket`, `wasbs://c@acct.blob.core.windows.net`), without
    /// any credentials of its userinfo.
    pub display_base: String,
    /// The object key (or directory prefix) within the store, without a
    /// leading `/`; may be empty (the bucket's root). For http(s) URLs it is
    /// the URL's path, still percent-encoded.
    pub key: String,
    /// The query string of an http(s) URL (a presigned URL's or an Azure SAS
    /// token's signature): sent with the request, never shown.
    pub query: Option<String>,
}

impl RemoteUri {
    /// The object's URI as `source_file` and messages show it (no query, no
    /// credentials).
    pub fn object_uri(&self, key: &str) -> String {
        format!("{}/{key}", self.display_base)
    }
}

/// Azure's blob and data-lake hosts: an `https://` URL on them is Azure.
const AZURE_HOSTS: [&str; 2] = [".blob.core.windows.net", ".dfs.core.windows.net"];

/// The schemes that name remote storage.
pub const REMOTE_SCHEMES: [&str; 11] =
    ["s3", "s3a", "gs", "gcs", "az", "azure", "abfs", "abfss", "wasb", "wasbs", "adl"];

/// Parses a remote path, or `None` for a local path (and `file://`), an
/// unknown scheme, or a remote URI without a bucket or host.
pub fn parse_remote(path: &str) -> Option<RemoteUri> {
    let (scheme, rest) = path.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let is_http = scheme == "http" || scheme == "https";
    // Object keys may contain `?`; only a URL has a query string.
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) if is_http => (r, Some(q.to_string())),
        _ => (rest, None),
    };
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    // The bucket, container or host: after any userinfo.
    if authority.rsplit_once('@').map_or(authority, |(_, host)| host).is_empty() {
        return None;
    }
    let base = format!("{scheme}://{authority}");
    // What is shown has no credentials (source/redact.rs); the store is
    // built from the whole authority (an HTTP URL's user and password are
    // its basic authentication).
    let display_base = super::redact::display_uri(&base).into_owned();
    let uri = |backend, store_url: String, display_base: String, key: &str| {
        Some(RemoteUri { backend, store_url, display_base, key: key.to_string(), query: query.clone() })
    };
    match scheme.as_str() {
        "s3" | "s3a" => uri(Backend::S3, format!("s3://{authority}"), display_base, key),
        "gs" | "gcs" => uri(Backend::Gcs, format!("gs://{authority}"), display_base, key),
        "az" | "azure" | "abfs" | "abfss" | "adl" => uri(Backend::Azure, base, display_base, key),
        // wasb[s]://container@account.blob.core.windows.net/key is that
        // container over the blob endpoint.
        "wasb" | "wasbs" => {
            let (container, host) = authority.rsplit_once('@')?;
            let container = container.split(':').next().unwrap_or(container);
            uri(Backend::Azure, format!("https://{host}/{container}"), display_base, key)
        }
        "http" | "https" => {
            let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            let host = host_port.split(':').next().unwrap_or(host_port).to_ascii_lowercase();
            if AZURE_HOSTS.iter().any(|h| host.ends_with(h)) {
                // https://account.blob.core.windows.net/container/key: the
                // container is the first path segment.
                let (container, key) = key.split_once('/').unwrap_or((key, ""));
                let shown = format!("{display_base}/{container}");
                return uri(Backend::Azure, format!("https://{authority}/{container}"), shown, key);
            }
            uri(Backend::Http, base, display_base, key)
        }
        _ => None,
    }
}

/// True when the path names a remote object (any scheme other than `file`).
pub fn is_remote_scheme(path: &str) -> bool {
    path.split_once("://").is_some_and(|(s, _)| !s.eq_ignore_ascii_case("file") && !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(path: &str) -> (Backend, String, String) {
        let u = parse_remote(path).unwrap();
        (u.backend, u.store_url, u.key)
    }

    #[test]
    fn every_scheme_docs_remote_names() {
        assert_eq!(parsed("s3://b/events/x.jsonl"), (Backend::S3, "s3://b".into(), "events/x.jsonl".into()));
        assert_eq!(parsed("s3a://b/x.jsonl"), (Backend::S3, "s3://b".into(), "x.jsonl".into()));
        assert_eq!(parsed("gs://b/x.csv"), (Backend::Gcs, "gs://b".into(), "x.csv".into()));
        // object_store knows gs:// only.
        assert_eq!(parsed("gcs://b/d/"), (Backend::Gcs, "gs://b".into(), "d/".into()));
        assert_eq!(parsed("az://c/x.xml"), (Backend::Azure, "az://c".into(), "x.xml".into()));
        assert_eq!(
            parsed("abfss://c@acct.dfs.core.windows.net/a/b.json"),
            (Backend::Azure, "abfss://c@acct.dfs.core.windows.net".into(), "a/b.json".into())
        );
        assert_eq!(
            parsed("wasbs://c@acct.blob.core.windows.net/a/b.json"),
            (Backend::Azure, "https://acct.blob.core.windows.net/c".into(), "a/b.json".into())
        );
        assert_eq!(
            parsed("https://acct.blob.core.windows.net/c/a/b.json"),
            (Backend::Azure, "https://acct.blob.core.windows.net/c".into(), "a/b.json".into())
        );
        assert_eq!(
            parsed("http://127.0.0.1:8080/data/x.jsonl"),
            (Backend::Http, "http://127.0.0.1:8080".into(), "data/x.jsonl".into())
        );
        assert_eq!(parsed("S3://B/x.jsonl").0, Backend::S3);
        assert_eq!(parsed("s3://bucket"), (Backend::S3, "s3://bucket".into(), String::new()));
    }

    #[test]
    fn queries_are_split_from_urls_only_and_never_shown() {
        let u = parse_remote("https://h/x.parquet?X-Amz-Signature=abc").unwrap();
        assert_eq!((u.key.as_str(), u.query.as_deref()), ("x.parquet", Some("X-Amz-Signature=abc")));
        assert_eq!(u.object_uri(&u.key), "https://h/x.parquet");
        let sas = parse_remote("https://acct.blob.core.windows.net/c/x.csv?sv=1&sig=s").unwrap();
        assert_eq!((sas.backend, sas.query.as_deref()), (Backend::Azure, Some("sv=1&sig=s")));
        assert_eq!(sas.object_uri(&sas.key), "https://acct.blob.core.windows.net/c/x.csv");
        // In an object key a `?` is just a character.
        assert_eq!(parse_remote("s3://b/what?.jsonl").unwrap().key, "what?.jsonl");
        assert_eq!(parse_remote("gcs://b/x.csv").unwrap().object_uri("x.csv"), "gcs://b/x.csv");
    }

    #[test]
    fn userinfo_reaches_the_store_but_is_never_shown() {
        let u = parse_remote("http://user:s3cret@127.0.0.1:8080/raw/x.jsonl?sig=q").unwrap();
        assert_eq!(u.backend, Backend::Http);
        // The request is the whole URL: reqwest sends the userinfo as basic authentication.
        assert_eq!(u.store_url, "http://user:s3cret@127.0.0.1:8080");
        assert_eq!(u.object_uri(&u.key), "http://127.0.0.1:8080/raw/x.jsonl");
        let s3 = parse_remote("s3://key:s3cret@lake/raw/a.jsonl").unwrap();
        assert_eq!((s3.backend, s3.object_uri(&s3.key).as_str()), (Backend::S3, "s3://lake/raw/a.jsonl"));
        // Userinfo does not hide an Azure host, and is not shown on it either.
        let az = parse_remote("https://u:p@acct.blob.core.windows.net/c/x.csv").unwrap();
        assert_eq!(
            (az.backend, az.object_uri(&az.key).as_str()),
            (Backend::Azure, "https://acct.blob.core.windows.net/c/x.csv")
        );
        let wasb = parse_remote("wasbs://c:s3cret@acct.blob.core.windows.net/x.csv").unwrap();
        assert_eq!(wasb.store_url, "https://acct.blob.core.windows.net/c");
        assert_eq!(wasb.object_uri(&wasb.key), "wasbs://c@acct.blob.core.windows.net/x.csv");
    }

    #[test]
    fn local_paths_are_not_remote() {
        assert_eq!(parse_remote("/data/x.jsonl"), None);
        assert_eq!(parse_remote("file:///data/x.jsonl"), None);
        assert_eq!(parse_remote("ftp://h/x.jsonl"), None);
        assert_eq!(parse_remote("s3:///x.jsonl"), None);
        assert_eq!(parse_remote("s3://key:secret@/x.jsonl"), None);
        assert!(is_remote_scheme("ftp://h/x"));
        assert!(!is_remote_scheme("file:///x"));
        assert!(!is_remote_scheme("data/x.jsonl"));
    }
}
