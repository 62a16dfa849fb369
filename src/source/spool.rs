//! Staging remote objects into local files (the "spool", docs/remote.md): every
//! remote input is downloaded once, at bind, streamed to a private temporary
//! directory, and then read by the same local readers as any file. The probe
//! and the scan read the staged copy, so nothing is downloaded twice, and
//! memory stays that of one network buffer per download. The directory is
//! removed when the scan's plan is dropped.
//!
//! Backends come from object_store with its standard configuration: the
//! environment variables of each provider (`AWS_*`, `GOOGLE_*`, `AZURE_*`,
//! `AZURITE_BLOB_STORAGE_URL`) and their credential chains. These
//! tuning variables apply: `SCHEMA_SANITIZER_SPOOL_DIR`,
//! `SCHEMA_SANITIZER_ASYNC_TIMEOUT` (seconds per request, default 120),
//! `SCHEMA_SANITIZER_ASYNC_RETRIES` (default 4) and
//! `SCHEMA_SANITIZER_ASYNC_CONCURRENCY` (parallel downloads, default 64).
//!
//! GCS emulators implement only Google's JSON API, while object_store speaks
//! the XML API; with `STORAGE_EMULATOR_HOST` set (the variable Google's own
//! client libraries honour) `gs://` goes to the emulator's JSON API,
//! unauthenticated, as those libraries do.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreExt, RetryConfig};

use super::remote::{Backend, RemoteUri};
use crate::error::{Result, SanitizeError};
use crate::options::{InputFormat, InputMode};

/// A private temporary directory holding staged objects; removed on drop.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Remote inputs staged locally: `files[i]` is the local copy of `uris[i]`.
#[derive(Debug)]
pub struct Staged {
    pub files: Vec<String>,
    pub uris: Vec<String>,
    pub spool: Spool,
}

/// The tuning variables (docs/remote.md).
struct Settings {
    timeout_secs: u64,
    retries: usize,
    concurrency: usize,
    spool_root: PathBuf,
    /// `AWS_EC2_METADATA_DISABLED`: no instance-metadata credential lookup.
    ec2_metadata_disabled: bool,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64, min: u64| {
            std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n >= min).unwrap_or(default)
        };
        Settings {
            timeout_secs: number("SCHEMA_SANITIZER_ASYNC_TIMEOUT", 120, 1),
            retries: number("SCHEMA_SANITIZER_ASYNC_RETRIES", 4, 0) as usize,
            concurrency: number("SCHEMA_SANITIZER_ASYNC_CONCURRENCY", 64, 1) as usize,
            spool_root: std::env::var_os("SCHEMA_SANITIZER_SPOOL_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir),
            ec2_metadata_disabled: env_flag("AWS_EC2_METADATA_DISABLED"),
        }
    }
}

/// Lists (directory mode) and downloads the remote input. `check_name`
/// validates a file name's extension before anything is downloaded.
pub fn stage(
    function: &str,
    uri: &RemoteUri,
    format: InputFormat,
    mode: InputMode,
    check_name: &dyn Fn(&str) -> Result<()>,
) -> Result<Staged> {
    let settings = Settings::from_env();
    // Messages never show a URL's query: it may hold a signature.
    let user_path = &uri.object_uri(&uri.key);
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        SanitizeError::io(format!("{function}: cannot {what} \"{user_path}\" ({}): {e}", uri.backend.name()))
    };
    // Everything that needs no request is decided first: the mode, the
    // extension, the HTTP listing refusal.
    match mode {
        InputMode::SingleFile => {
            if uri.key.is_empty() || uri.key.ends_with('/') {
                return Err(SanitizeError::options(format!(
                    "{function}: \"{user_path}\" names a directory; pass input_mode := 'directory' to read its files"
                )));
            }
            check_name(&uri.key)?;
        }
        InputMode::Directory if uri.backend == Backend::Http => {
            return Err(SanitizeError::options(format!(
                "{function}: input_mode 'directory' is not supported for http(s):// paths: HTTP has no portable directory listing (\"{user_path}\")"
            )));
        }
        InputMode::Directory => {}
    }
    let source = Source::new(uri, &settings).map_err(|e| fail("open", &e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail("start the download runtime for", &e))?;
    let keys: Vec<String> = match mode {
        InputMode::SingleFile => vec![uri.key.clone()],
        InputMode::Directory => {
            let prefix = uri.key.trim_end_matches('/');
            let mut keys: Vec<String> = runtime
                .block_on(source.list(prefix))
                .map_err(|e| fail("list", &e))?
                .into_iter()
                .filter(|k| check_name(k).is_ok())
                .collect();
            keys.sort();
            if keys.is_empty() {
                return Err(SanitizeError::input(format!(
                    "{function}: directory \"{user_path}\" has no {} files (direct children only, never recursive)",
                    format.extensions().join(" or ")
                )));
            }
            keys
        }
    };
    let spool = new_spool(&settings.spool_root).map_err(|e| fail("create a spool directory for", &e))?;
    let files: Vec<PathBuf> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| spool.dir.join(format!("{i:06}_{}", k.rsplit('/').next().unwrap_or(k))))
        .collect();
    let downloads = keys.iter().zip(&files).map(|(key, file)| source.download(key, file));
    runtime
        .block_on(futures::stream::iter(downloads).buffer_unordered(settings.concurrency).try_collect::<Vec<()>>())
        .map_err(|(key, e)| {
            let shown = uri.object_uri(&key);
            match e {
                // The store's message carries the whole response body; the URI says enough.
                DownloadError::Store(object_store::Error::NotFound { .. }) | DownloadError::NotFound => {
                    SanitizeError::io(format!("{function}: no such file \"{shown}\" ({})", uri.backend.name()))
                }
                e => {
                    SanitizeError::io(format!("{function}: cannot download \"{shown}\" ({}): {e}", uri.backend.name()))
                }
            }
        })?;
    Ok(Staged {
        files: files.iter().map(|f| f.to_string_lossy().into_owned()).collect(),
        uris: keys.iter().map(|k| uri.object_uri(k)).collect(),
        spool,
    })
}

#[derive(Debug)]
enum DownloadError {
    Store(object_store::Error),
    Http(String),
    NotFound,
    Local(std::io::Error),
}

impl std::fmt::Display for DownloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DownloadError::Store(e) => write!(f, "{e}"),
            DownloadError::Http(e) => write!(f, "{e}"),
            DownloadError::NotFound => write!(f, "not found"),
            DownloadError::Local(e) => write!(f, "writing the local copy failed: {e}"),
        }
    }
}

/// Where remote objects come from: an object_store backend, a plain HTTP
/// URL, or a GCS emulator's JSON API.
enum Source {
    Store(Arc<dyn ObjectStore>),
    /// The whole URL, query included (presigned URLs carry their signature there).
    Http {
        client: reqwest::Client,
        url: String,
    },
    GcsEmulator {
        client: reqwest::Client,
        host: String,
        bucket: String,
    },
}

/// Object stores are downloaded in ranges of this size, each its own request
/// under the timeout, so a large object never runs into the timeout.
const RANGE_BYTES: u64 = 16 << 20;

impl Source {
    fn new(uri: &RemoteUri, settings: &Settings) -> std::result::Result<Source, String> {
        // reqwest's read timeout bounds a stalled transfer, not a long one.
        let client = || {
            reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(settings.timeout_secs.min(30)))
                .read_timeout(std::time::Duration::from_secs(settings.timeout_secs))
                .build()
                .map_err(|e| e.to_string())
        };
        match uri.backend {
            Backend::Http => {
                let query = uri.query.as_ref().map(|q| format!("?{q}")).unwrap_or_default();
                Ok(Source::Http { client: client()?, url: format!("{}/{}{query}", uri.store_url, uri.key) })
            }
            Backend::Gcs => match std::env::var("STORAGE_EMULATOR_HOST").ok().filter(|h| !h.is_empty()) {
                Some(host) => {
                    let host = if host.contains("://") { host } else { format!("http://{host}") };
                    let bucket = uri.store_url.split_once("://").map_or("", |(_, b)| b).to_string();
                    Ok(Source::GcsEmulator { client: client()?, host: host.trim_end_matches('/').to_string(), bucket })
                }
                None => build_store(uri, settings).map(Source::Store).map_err(|e| e.to_string()),
            },
            _ => build_store(uri, settings).map(Source::Store).map_err(|e| e.to_string()),
        }
    }

    /// The keys of the objects directly under `prefix` (never recursive).
    async fn list(&self, prefix: &str) -> std::result::Result<Vec<String>, String> {
        match self {
            Source::Store(store) => {
                let prefix = if prefix.is_empty() { None } else { Some(object_path(prefix)?) };
                let listing = store.list_with_delimiter(prefix.as_ref()).await.map_err(|e| e.to_string())?;
                Ok(listing.objects.into_iter().map(|o| o.location.to_string()).collect())
            }
            Source::Http { .. } => Err("HTTP has no directory listing".to_string()),
            Source::GcsEmulator { client, host, bucket } => {
                let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
                let mut keys = Vec::new();
                let mut page: Option<String> = None;
                loop {
                    let mut url = format!(
                        "{host}/storage/v1/b/{}/o?delimiter=%2F&prefix={}",
                        percent_encode(bucket),
                        percent_encode(&prefix)
                    );
                    if let Some(token) = &page {
                        url.push_str(&format!("&pageToken={}", percent_encode(token)));
                    }
                    let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
                    let status = response.status();
                    let body = response.text().await.map_err(|e| e.to_string())?;
                    if !status.is_success() {
                        return Err(format!("GET {url}: {status}"));
                    }
                    let doc: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
                    let names = doc["items"].as_array().into_iter().flatten().filter_map(|o| o["name"].as_str());
                    keys.extend(names.map(str::to_string));
                    match doc["nextPageToken"].as_str() {
                        Some(t) if !t.is_empty() => page = Some(t.to_string()),
                        _ => return Ok(keys),
                    }
                }
            }
        }
    }

    /// Downloads one object into `file`.
    async fn download(&self, key: &str, file: &Path) -> std::result::Result<(), (String, DownloadError)> {
        let failed = |e| (key.to_string(), e);
        let mut out = std::fs::File::create(file).map_err(|e| failed(DownloadError::Local(e)))?;
        match self {
            Source::Store(store) => {
                let location = object_path(key).map_err(|e| failed(DownloadError::Http(e)))?;
                let size = store.head(&location).await.map_err(|e| failed(DownloadError::Store(e)))?.size;
                let mut at = 0;
                while at < size {
                    let end = (at + RANGE_BYTES).min(size);
                    let bytes =
                        store.get_range(&location, at..end).await.map_err(|e| failed(DownloadError::Store(e)))?;
                    out.write_all(&bytes).map_err(|e| failed(DownloadError::Local(e)))?;
                    at = end;
                }
            }
            Source::Http { client, url } => stream_get(client, url, &mut out).await.map_err(failed)?,
            Source::GcsEmulator { client, host, bucket } => {
                let url = format!(
                    "{host}/download/storage/v1/b/{}/o/{}?alt=media",
                    percent_encode(bucket),
                    percent_encode(key)
                );
                stream_get(client, &url, &mut out).await.map_err(failed)?;
            }
        }
        out.flush().map_err(|e| failed(DownloadError::Local(e)))
    }
}

/// An object key as object_store's path: the key as written (object_store's
/// `Path::from` would percent-encode characters such as `~` a second time).
fn object_path(key: &str) -> std::result::Result<ObjectPath, String> {
    ObjectPath::parse(key).map_err(|e| format!("invalid object key \"{key}\": {e}"))
}

/// GETs `url` and streams the body into `out`.
async fn stream_get(
    client: &reqwest::Client,
    url: &str,
    out: &mut std::fs::File,
) -> std::result::Result<(), DownloadError> {
    let response = client.get(url).send().await.map_err(|e| DownloadError::Http(without_query(e.to_string())))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Err(DownloadError::NotFound);
    }
    if !response.status().is_success() {
        return Err(DownloadError::Http(format!("the server answered {}", response.status())));
    }
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| DownloadError::Http(without_query(e.to_string())))?;
        out.write_all(&chunk).map_err(DownloadError::Local)?;
    }
    Ok(())
}

/// reqwest's messages quote the URL; a query may hold a signature.
fn without_query(message: String) -> String {
    match message.find('?') {
        Some(i) => {
            let end = message[i..].find([' ', ')']).map_or(message.len(), |j| i + j);
            format!("{}{}", &message[..i], &message[end..])
        }
        None => message,
    }
}

/// RFC 3986 percent-encoding of everything but the unreserved characters
/// (what a GCS object name needs inside a URL path segment or query).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A new directory only this process's user can read, created exclusively
/// (never an existing one someone else prepared).
fn new_spool(root: &Path) -> std::io::Result<Spool> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(root)?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("schema_sanitizer-{}-{n}-{nanos:08x}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => return Ok(Spool { dir }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// True when the environment variable is set to a true value (`true`, `1`,
/// `yes`, any case), as the AWS SDKs read their boolean settings.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// The credential sources of S3, in the order object_store tries them
/// (docs/remote.md): static keys, web identity, the container endpoints,
/// then the EC2 instance metadata endpoint. With the metadata endpoint
/// disabled (`AWS_EC2_METADATA_DISABLED`, as the AWS SDKs honour it) and no
/// other source, the scan fails at once, naming what is missing, instead of
/// calling 169.254.169.254 from inside someone's database.
fn check_s3_credentials(builder: &AmazonS3Builder, metadata_disabled: bool) -> object_store::Result<()> {
    let has = |k: AmazonS3ConfigKey| builder.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let unsigned = builder.get_config_value(&AmazonS3ConfigKey::SkipSignature).is_some_and(|v| v == "true");
    let found = unsigned
        || has(AmazonS3ConfigKey::AccessKeyId)
        || has(AmazonS3ConfigKey::SecretAccessKey)
        || (has(AmazonS3ConfigKey::WebIdentityTokenFile) && has(AmazonS3ConfigKey::RoleArn))
        || has(AmazonS3ConfigKey::ContainerCredentialsRelativeUri)
        || (has(AmazonS3ConfigKey::ContainerCredentialsFullUri)
            && has(AmazonS3ConfigKey::ContainerAuthorizationTokenFile));
    if found || !metadata_disabled {
        return Ok(());
    }
    Err(object_store::Error::Generic {
        store: "S3",
        source: "no AWS credentials: AWS_EC2_METADATA_DISABLED is set, so the instance metadata endpoint is not asked, and none of AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, or AWS_CONTAINER_CREDENTIALS_FULL_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE is set (AWS_SKIP_SIGNATURE=true reads a public bucket unsigned)".into(),
    })
}

/// The store for a URI, configured from the provider's environment
/// variables; the request timeout and retries are those docs/remote.md gives.
fn build_store(uri: &RemoteUri, settings: &Settings) -> object_store::Result<Arc<dyn ObjectStore>> {
    let timeout = format!("{}s", settings.timeout_secs);
    let retry = RetryConfig { max_retries: settings.retries, ..RetryConfig::default() };
    Ok(match uri.backend {
        Backend::S3 => {
            let builder = AmazonS3Builder::from_env()
                .with_url(&uri.store_url)
                .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), &timeout)
                .with_retry(retry);
            check_s3_credentials(&builder, settings.ec2_metadata_disabled)?;
            Arc::new(builder.build()?)
        }
        Backend::Gcs => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_url(&uri.store_url)
                .with_config(GoogleConfigKey::Client(ClientConfigKey::Timeout), &timeout)
                .with_retry(retry)
                .build()?,
        ),
        Backend::Azure => {
            let mut builder = MicrosoftAzureBuilder::from_env()
                .with_url(&uri.store_url)
                .with_config(AzureConfigKey::Client(ClientConfigKey::Timeout), &timeout)
                .with_retry(retry);
            // An https:// URL's query is its SAS token.
            if let Some(sas) = &uri.query {
                builder = builder.with_config(AzureConfigKey::SasKey, sas);
            }
            Arc::new(builder.build()?)
        }
        // Plain HTTP goes through reqwest (see `Source::Http`).
        Backend::Http => {
            return Err(object_store::Error::NotImplemented { operation: "HTTP".into(), implementer: "spool".into() })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse_remote;

    #[test]
    fn s3_without_credentials_and_metadata_disabled_fails_at_once() {
        let bare = AmazonS3Builder::new().with_bucket_name("b");
        let e = check_s3_credentials(&bare, true).unwrap_err().to_string();
        assert!(e.contains("no AWS credentials") && e.contains("AWS_ACCESS_KEY_ID"), "{e}");
        // The metadata endpoint allowed: object_store's chain decides.
        assert!(check_s3_credentials(&bare, false).is_ok());
        let keyed = bare.clone().with_access_key_id("k").with_secret_access_key("s");
        assert!(check_s3_credentials(&keyed, true).is_ok());
        let unsigned = AmazonS3Builder::new().with_bucket_name("b").with_skip_signature(true);
        assert!(check_s3_credentials(&unsigned, true).is_ok());
    }

    #[test]
    fn every_scheme_builds_a_store_without_a_request() {
        // The store is built from the environment; credentials for S3 are
        // not required when the metadata endpoint is allowed.
        let settings = Settings {
            timeout_secs: 5,
            retries: 0,
            concurrency: 1,
            spool_root: std::env::temp_dir(),
            ec2_metadata_disabled: false,
        };
        for uri in [
            "s3://b/x.jsonl",
            "s3a://b/x.jsonl",
            "gs://b/x.jsonl",
            "gcs://b/x.jsonl",
            "abfss://c@acct.dfs.core.windows.net/x.jsonl",
            "wasbs://c@acct.blob.core.windows.net/x.jsonl",
            "https://acct.blob.core.windows.net/c/x.jsonl?sv=2024&sig=abc",
        ] {
            let parsed = parse_remote(uri).unwrap();
            assert!(build_store(&parsed, &settings).is_ok(), "{uri}: {:?}", build_store(&parsed, &settings).err());
        }
    }

    #[test]
    fn a_spool_is_private_new_and_removed() {
        let root = std::env::temp_dir().join(format!("ss-spool-test-{}", std::process::id()));
        let a = new_spool(&root).unwrap();
        let b = new_spool(&root).unwrap();
        assert_ne!(a.dir, b.dir);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&a.dir).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let dir = a.dir.clone();
        drop(a);
        assert!(!dir.exists());
        drop(b);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn messages_lose_the_query() {
        assert_eq!(
            without_query("error sending request for url (https://h/x.csv?sig=secret)".into()),
            "error sending request for url (https://h/x.csv)"
        );
        assert_eq!(without_query("no url here".into()), "no url here");
    }

    #[test]
    fn percent_encoding_keeps_only_unreserved_characters() {
        assert_eq!(percent_encode("raw/a b+c.jsonl"), "raw%2Fa%20b%2Bc.jsonl");
        assert_eq!(percent_encode("é~_-."), "%C3%A9~_-.");
    }
}
