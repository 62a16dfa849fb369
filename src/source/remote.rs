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
    /// What the store is built from: `s3://bucket`, `az://container`,
    /// `abfss://container@account.dfs.core.windows.net`, `https://host:port`.
    pub store_url: String,
    /// The object key (or directory prefix) within the store, without a
    /// leading `/`; may be empty (the bucket's root).
    pub key: String,
}

/// Azure's blob and data-lake hosts: an `https://` URL on them is Azure.
const AZURE_HOSTS: [&str; 2] = [".blob.core.windows.net", ".dfs.core.windows.net"];

/// Parses a remote path, or `None` for a local path (and `file://`).
pub fn parse_remote(path: &str) -> Option<RemoteUri> {
    let (scheme, rest) = path.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    let backend = match scheme.as_str() {
        "s3" | "s3a" => Backend::S3,
        "gs" | "gcs" => Backend::Gcs,
        "az" | "azure" | "abfs" | "abfss" | "wasb" | "wasbs" | "adl" => Backend::Azure,
        "http" | "https" => {
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
            if AZURE_HOSTS.iter().any(|h| host.ends_with(h)) {
                // https://account.blob.core.windows.net/container/key: the
                // container is the first path segment.
                let (container, key) = key.split_once('/').unwrap_or((key, ""));
                return Some(RemoteUri {
                    backend: Backend::Azure,
                    store_url: format!("{scheme}://{authority}/{container}"),
                    key: key.to_string(),
                });
            }
            Backend::Http
        }
        _ => return None,
    };
    if authority.is_empty() {
        return None;
    }
    Some(RemoteUri { backend, store_url: format!("{scheme}://{authority}"), key: key.to_string() })
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
    fn every_scheme_of_the_seed() {
        assert_eq!(parsed("s3://b/events/x.jsonl"), (Backend::S3, "s3://b".into(), "events/x.jsonl".into()));
        assert_eq!(parsed("gs://b/x.csv"), (Backend::Gcs, "gs://b".into(), "x.csv".into()));
        assert_eq!(parsed("gcs://b/d/"), (Backend::Gcs, "gcs://b".into(), "d/".into()));
        assert_eq!(parsed("az://c/x.xml"), (Backend::Azure, "az://c".into(), "x.xml".into()));
        assert_eq!(
            parsed("abfss://c@acct.dfs.core.windows.net/a/b.json"),
            (Backend::Azure, "abfss://c@acct.dfs.core.windows.net".into(), "a/b.json".into())
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
    fn local_paths_are_not_remote() {
        assert_eq!(parse_remote("/data/x.jsonl"), None);
        assert_eq!(parse_remote("file:///data/x.jsonl"), None);
        assert_eq!(parse_remote("ftp://h/x.jsonl"), None);
        assert_eq!(parse_remote("s3:///x.jsonl"), None);
        assert!(is_remote_scheme("ftp://h/x"));
        assert!(!is_remote_scheme("file:///x"));
        assert!(!is_remote_scheme("data/x.jsonl"));
    }
}
