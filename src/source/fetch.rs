//! The storage backends behind the spool (source/spool.rs): one object_store
//! client per scheme with each provider's standard configuration and
//! credential chain, listing and ranged, streamed downloads, and the
//! tuning variables of docs/remote.md. Messages never show a URL's query.
//!
//! Backends come from object_store with its standard configuration: the
//! environment variables of each provider (`AWS_*`, `GOOGLE_*`, `AZURE_*`,
//! `AZURITE_BLOB_STORAGE_URL`) and their credential chains. These tuning
//! variables apply: `SCHEMA_SANITIZER_SPOOL_DIR`,
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

/// A listing with sizes (see [`Store::list_sized`]).
pub(super) struct Sized {
    pub(super) objects: Vec<(String, u64)>,
    pub(super) any_below: bool,
}

/// The tuning variables (docs/remote.md).
pub(super) struct Settings {
    timeout_secs: u64,
    retries: usize,
    pub(super) concurrency: usize,
    pub(super) spool_root: PathBuf,
    /// `AWS_EC2_METADATA_DISABLED`: no instance-metadata credential lookup.
    ec2_metadata_disabled: bool,
    /// The setting that turned the GCE metadata server off, as written
    /// (`NO_GCE_CHECK=true`), or `None`.
    gce_metadata_off: Option<String>,
    /// The `AZURE_TOKEN_CREDENTIALS` setting that leaves managed identity
    /// (the IMDS endpoint) out, as written, or `None`.
    azure_imds_off: Option<String>,
}

impl Settings {
    pub(super) fn from_env() -> Settings {
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
            gce_metadata_off: gce_metadata_off(
                std::env::var("NO_GCE_CHECK").ok().as_deref(),
                std::env::var("METADATA_SERVER_DETECTION").ok().as_deref(),
            ),
            azure_imds_off: azure_imds_off(std::env::var("AZURE_TOKEN_CREDENTIALS").ok().as_deref()),
        }
    }
}

/// Lists (directory mode) and downloads the remote input. `check_name`

#[derive(Debug)]
pub(super) enum DownloadError {
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
pub(super) enum Store {
    Object(Arc<dyn ObjectStore>),
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

/// Outputs are uploaded in parts of this size (S3's minimum is 5 MiB).
const UPLOAD_PART_BYTES: usize = 16 << 20;

impl Store {
    pub(super) fn new(uri: &RemoteUri, settings: &Settings) -> std::result::Result<Store, String> {
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
                Ok(Store::Http { client: client()?, url: format!("{}/{}{query}", uri.store_url, uri.key) })
            }
            Backend::Gcs => match std::env::var("STORAGE_EMULATOR_HOST").ok().filter(|h| !h.is_empty()) {
                Some(host) => {
                    let host = if host.contains("://") { host } else { format!("http://{host}") };
                    let bucket = uri.store_url.split_once("://").map_or("", |(_, b)| b).to_string();
                    Ok(Store::GcsEmulator { client: client()?, host: host.trim_end_matches('/').to_string(), bucket })
                }
                None => build_store(uri, settings).map(Store::Object).map_err(|e| e.to_string()),
            },
            _ => build_store(uri, settings).map(Store::Object).map_err(|e| e.to_string()),
        }
    }

    /// The keys of the objects directly under `prefix` (never recursive).
    /// The keys below `prefix`: its direct children, or with `recursive`
    /// every key at any depth (for `**` and multi-segment globs).
    pub(super) async fn list(&self, prefix: &str, recursive: bool) -> std::result::Result<Vec<String>, String> {
        Ok(self.list_sized(prefix, recursive).await?.objects.into_iter().map(|(key, _)| key).collect())
    }

    /// The objects below `prefix` with their sizes (direct children only
    /// unless `recursive`), and whether anything at all is below it.
    pub(super) async fn list_sized(&self, prefix: &str, recursive: bool) -> std::result::Result<Sized, String> {
        match self {
            Store::Object(store) => {
                let prefix = if prefix.is_empty() { None } else { Some(object_path(prefix)?) };
                if recursive {
                    let objects: Vec<_> = store.list(prefix.as_ref()).try_collect().await.map_err(|e| e.to_string())?;
                    let objects: Vec<(String, u64)> =
                        objects.into_iter().map(|o| (o.location.to_string(), o.size)).collect();
                    return Ok(Sized { any_below: !objects.is_empty(), objects });
                }
                let listing = store.list_with_delimiter(prefix.as_ref()).await.map_err(|e| e.to_string())?;
                let any_below = !listing.objects.is_empty() || !listing.common_prefixes.is_empty();
                let objects = listing.objects.into_iter().map(|o| (o.location.to_string(), o.size)).collect();
                Ok(Sized { objects, any_below })
            }
            Store::Http { .. } => Err("HTTP has no directory listing".to_string()),
            Store::GcsEmulator { client, host, bucket } => {
                let mut keys = Vec::new();
                let mut any_below = false;
                gcs_emulator_pages(client, host, bucket, prefix, recursive, |doc| {
                    let items = doc["items"].as_array().into_iter().flatten();
                    keys.extend(items.filter_map(|o| {
                        // The JSON API gives sizes as decimal strings.
                        let size = o["size"].as_str().and_then(|s| s.parse().ok()).or_else(|| o["size"].as_u64());
                        Some((o["name"].as_str()?.to_string(), size.unwrap_or(0)))
                    }));
                    any_below |= doc["prefixes"].as_array().is_some_and(|p| !p.is_empty());
                })
                .await?;
                Ok(Sized { any_below: any_below || !keys.is_empty(), objects: keys })
            }
        }
    }

    /// The last `n` bytes of an object (all of it when it is smaller): a
    /// Parquet footer without downloading the data before it.
    pub(super) async fn tail(&self, key: &str, n: u64) -> std::result::Result<Vec<u8>, DownloadError> {
        match self {
            Store::Object(store) => {
                let location = object_path(key).map_err(DownloadError::Http)?;
                let size = store.head(&location).await.map_err(DownloadError::Store)?.size;
                let bytes =
                    store.get_range(&location, size.saturating_sub(n)..size).await.map_err(DownloadError::Store)?;
                Ok(bytes.to_vec())
            }
            Store::Http { client, url } => suffix_get(client, url, n).await,
            Store::GcsEmulator { client, host, bucket } => {
                let url = format!(
                    "{host}/download/storage/v1/b/{}/o/{}?alt=media",
                    percent_encode(bucket),
                    percent_encode(key)
                );
                suffix_get(client, &url, n).await
            }
        }
    }

    /// Uploads `file` as the object `key` in one multipart upload (the
    /// object appears only when the upload completes; a failed upload is
    /// aborted). A GCS emulator takes one media upload, also atomic.
    pub(super) async fn upload(&self, key: &str, file: &Path, concurrency: usize) -> std::result::Result<(), String> {
        use std::io::Read;
        let mut input = std::fs::File::open(file).map_err(|e| format!("cannot read the staged file: {e}"))?;
        match self {
            Store::Object(store) => {
                let location = object_path(key)?;
                let upload = store.put_multipart(&location).await.map_err(|e| e.to_string())?;
                let mut writer = object_store::WriteMultipart::new_with_chunk_size(upload, UPLOAD_PART_BYTES);
                let mut buffer = vec![0u8; 1 << 20];
                loop {
                    let n = match input.read(&mut buffer) {
                        Ok(n) => n,
                        Err(e) => {
                            let _ = writer.abort().await;
                            return Err(format!("cannot read the staged file: {e}"));
                        }
                    };
                    if n == 0 {
                        break;
                    }
                    if let Err(e) = writer.wait_for_capacity(concurrency).await {
                        let _ = writer.abort().await;
                        return Err(e.to_string());
                    }
                    writer.write(&buffer[..n]);
                }
                // Every part sent before completing: a failed part aborts
                // the upload instead of leaving it open (finish would not).
                if let Err(e) = writer.wait_for_capacity(0).await {
                    let _ = writer.abort().await;
                    return Err(e.to_string());
                }
                writer.finish().await.map(|_| ()).map_err(|e| e.to_string())
            }
            Store::Http { .. } => Err("HTTP URLs cannot be written".to_string()),
            Store::GcsEmulator { client, host, bucket } => {
                let url = format!(
                    "{host}/upload/storage/v1/b/{}/o?uploadType=media&name={}",
                    percent_encode(bucket),
                    percent_encode(key)
                );
                // Streamed from the file, never held whole.
                let chunks = std::iter::from_fn(move || {
                    let mut buffer = vec![0u8; 1 << 20];
                    match input.read(&mut buffer) {
                        Ok(0) => None,
                        Ok(n) => {
                            buffer.truncate(n);
                            Some(Ok::<_, std::io::Error>(buffer))
                        }
                        Err(e) => Some(Err(e)),
                    }
                });
                let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
                let response = client
                    .post(&url)
                    .header("content-type", "application/octet-stream")
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let status = response.status();
                if !status.is_success() {
                    return Err(format!("POST {url}: {status}"));
                }
                Ok(())
            }
        }
    }

    /// Whether the object `key` exists.
    pub(super) async fn exists(&self, key: &str) -> std::result::Result<bool, String> {
        match self {
            Store::Object(store) => match store.head(&object_path(key)?).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(e.to_string()),
            },
            Store::Http { .. } => Err("HTTP URLs cannot be written".to_string()),
            Store::GcsEmulator { client, host, bucket } => {
                let url = format!("{host}/storage/v1/b/{}/o/{}", percent_encode(bucket), percent_encode(key));
                let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
                match response.status() {
                    s if s.is_success() => Ok(true),
                    reqwest::StatusCode::NOT_FOUND => Ok(false),
                    s => Err(format!("GET {url}: {s}")),
                }
            }
        }
    }

    /// Downloads one object into `file`.
    pub(super) async fn download(&self, key: &str, file: &Path) -> std::result::Result<(), (String, DownloadError)> {
        let failed = |e| (key.to_string(), e);
        let mut out = std::fs::File::create(file).map_err(|e| failed(DownloadError::Local(e)))?;
        match self {
            Store::Object(store) => {
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
            Store::Http { client, url } => stream_get(client, url, &mut out).await.map_err(failed)?,
            Store::GcsEmulator { client, host, bucket } => {
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

/// The last `n` bytes by an HTTP suffix range; a server that ignores the
/// range (200 with the whole body) still gives the right bytes.
async fn suffix_get(client: &reqwest::Client, url: &str, n: u64) -> std::result::Result<Vec<u8>, DownloadError> {
    let response = client
        .get(url)
        .header(reqwest::header::RANGE, format!("bytes=-{n}"))
        .send()
        .await
        .map_err(|e| DownloadError::Http(without_query(e.to_string())))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Err(DownloadError::NotFound);
    }
    if !response.status().is_success() {
        return Err(DownloadError::Http(format!("the server answered {}", response.status())));
    }
    let partial = response.status() == reqwest::StatusCode::PARTIAL_CONTENT;
    let body = response.bytes().await.map_err(|e| DownloadError::Http(without_query(e.to_string())))?;
    let skip = if partial { 0 } else { body.len().saturating_sub(n as usize) };
    Ok(body[skip..].to_vec())
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

/// True when the environment variable is set to a true value (`true`, `1`,
/// `yes`, any case), as the AWS SDKs read their boolean settings.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// A boolean setting as object_store reads it (a builder hands back the
/// text it was given until it builds: `TRUE`, `1`, `on` are true too).
fn config_true(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes" | "y")
}

/// The credential sources of S3, in the order object_store tries them
/// (docs/remote.md): static keys, web identity, the container endpoints,
/// then the EC2 instance metadata endpoint. With the metadata endpoint
/// disabled (`AWS_EC2_METADATA_DISABLED`, as the AWS SDKs honour it) and no
/// other source, the scan fails at once, naming what is missing, instead of
/// calling 169.254.169.254 from inside someone's database.
fn check_s3_credentials(builder: &AmazonS3Builder, metadata_disabled: bool) -> object_store::Result<()> {
    let has = |k: AmazonS3ConfigKey| builder.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let unsigned = builder.get_config_value(&AmazonS3ConfigKey::SkipSignature).is_some_and(|v| config_true(&v));
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

/// Whether the GCE metadata server is switched off, as Google's own auth
/// libraries read it: `NO_GCE_CHECK=true` (the Java and Python libraries,
/// gcsfs, TensorFlow) or `METADATA_SERVER_DETECTION=none` (the Node.js
/// libraries). The setting, as written, for the message; `None` when on.
fn gce_metadata_off(no_gce_check: Option<&str>, detection: Option<&str>) -> Option<String> {
    if let Some(v) = no_gce_check.filter(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes")) {
        return Some(format!("NO_GCE_CHECK={v}"));
    }
    detection.filter(|v| v.trim().eq_ignore_ascii_case("none")).map(|v| format!("METADATA_SERVER_DETECTION={v}"))
}

/// Whether managed identity (the instance metadata endpoint, IMDS) is left
/// out of the Azure credential chain, as Azure's identity libraries read
/// `AZURE_TOKEN_CREDENTIALS`: `dev` (developer tools only) or the name of
/// one credential other than `ManagedIdentityCredential` leave it out;
/// `prod`, `ManagedIdentityCredential` or no value keep it. A value the
/// libraries would refuse leaves it out too: a typo must not mean a request
/// to 169.254.169.254. The setting, as written, for the message.
fn azure_imds_off(token_credentials: Option<&str>) -> Option<String> {
    let value = token_credentials?;
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "prod" | "managedidentitycredential" => None,
        _ => Some(format!("AZURE_TOKEN_CREDENTIALS={value}")),
    }
}

/// The application default credentials file gcloud writes, where
/// object_store looks for it.
fn gcloud_credentials_file() -> Option<PathBuf> {
    let (home, path) = if cfg!(windows) {
        ("APPDATA", "gcloud/application_default_credentials.json")
    } else {
        ("HOME", ".config/gcloud/application_default_credentials.json")
    };
    Some(Path::new(&std::env::var_os(home)?).join(path))
}

/// The credential sources of GCS, in the order object_store tries them
/// (docs/remote.md): a service account, application default credentials,
/// then the GCE metadata server. With the metadata server switched off
/// ([`gce_metadata_off`]) and no other source, the scan fails at once,
/// naming what is missing. `gcloud_file`: gcloud's credentials file exists.
fn check_gcs_credentials(
    builder: &GoogleCloudStorageBuilder,
    metadata_off: Option<&str>,
    gcloud_file: bool,
) -> object_store::Result<()> {
    let has = |k: GoogleConfigKey| builder.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let unsigned = builder.get_config_value(&GoogleConfigKey::SkipSignature).is_some_and(|v| config_true(&v));
    let found = unsigned
        || gcloud_file
        || has(GoogleConfigKey::ServiceAccount)
        || has(GoogleConfigKey::ServiceAccountKey)
        || has(GoogleConfigKey::ApplicationCredentials);
    let Some(setting) = metadata_off.filter(|_| !found) else { return Ok(()) };
    Err(object_store::Error::Generic {
        store: "GCS",
        source: format!("no GCS credentials: {setting} is set, so the GCE metadata server is not asked, and none of GOOGLE_SERVICE_ACCOUNT (or GOOGLE_SERVICE_ACCOUNT_PATH), GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS or gcloud's application default credentials file (~/.config/gcloud/application_default_credentials.json) is there (GOOGLE_SKIP_SIGNATURE=true reads a public bucket unsigned; STORAGE_EMULATOR_HOST names an emulator)").into(),
    })
}

/// The credential sources of Azure, in the order object_store tries them
/// (docs/remote.md): the emulator, a bearer token, an account key, workload
/// identity, a client secret, a SAS, the Azure CLI, then managed identity
/// (the IMDS endpoint). With managed identity left out ([`azure_imds_off`])
/// and no other source, the scan fails at once, naming what is missing.
fn check_azure_credentials(builder: &MicrosoftAzureBuilder, imds_off: Option<&str>) -> object_store::Result<()> {
    let has = |k: AzureConfigKey| builder.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let on = |k: AzureConfigKey| builder.get_config_value(&k).is_some_and(|v| config_true(&v));
    let found = on(AzureConfigKey::UseEmulator)
        || on(AzureConfigKey::SkipSignature)
        || on(AzureConfigKey::UseAzureCli)
        || has(AzureConfigKey::Token)
        || has(AzureConfigKey::AccessKey)
        || has(AzureConfigKey::SasKey)
        || (has(AzureConfigKey::ClientId)
            && has(AzureConfigKey::AuthorityId)
            && has(AzureConfigKey::FederatedTokenFile))
        || (has(AzureConfigKey::ClientId) && has(AzureConfigKey::ClientSecret) && has(AzureConfigKey::AuthorityId))
        || (has(AzureConfigKey::FabricTokenServiceUrl)
            && has(AzureConfigKey::FabricWorkloadHost)
            && has(AzureConfigKey::FabricSessionToken)
            && has(AzureConfigKey::FabricClusterIdentifier));
    let Some(setting) = imds_off.filter(|_| !found) else { return Ok(()) };
    Err(object_store::Error::Generic {
        store: "MicrosoftAzure",
        source: format!("no Azure credentials: {setting} leaves managed identity out, so the instance metadata endpoint (IMDS) is not asked, and none of AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_KEY (or a SAS token in an https:// URL's query), AZURE_STORAGE_TOKEN, AZURE_CLIENT_ID with AZURE_CLIENT_SECRET and AZURE_TENANT_ID, AZURE_CLIENT_ID with AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE, or AZURE_USE_AZURE_CLI=true is set (AZURE_SKIP_SIGNATURE=true reads a public container unsigned; AZURE_STORAGE_USE_EMULATOR=true talks to Azurite)").into(),
    })
}

/// Whether the provider's environment variables configure object_store for
/// `backend`: any `AWS_`, `GOOGLE_` (or `STORAGE_EMULATOR_HOST`) or `AZURE_`
/// variable except the switches that only keep the metadata endpoints out
/// (which the tests and CI set everywhere). Without one, a remote path is
/// first offered to DuckDB's file system (source/mod.rs), whose secrets
/// and registered file systems are then the configuration. HTTP has no
/// such variables: always `false`.
pub fn configured_by_env(backend: Backend) -> bool {
    configured_in(backend, std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()))
}

fn configured_in(backend: Backend, names: impl Iterator<Item = String>) -> bool {
    const SWITCHES: [&str; 3] = ["AWS_EC2_METADATA_DISABLED", "AZURE_TOKEN_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"];
    let prefixes: &[&str] = match backend {
        Backend::S3 => &["AWS_"],
        Backend::Gcs => &["GOOGLE_", "STORAGE_EMULATOR_HOST"],
        Backend::Azure => &["AZURE_"],
        Backend::Http => &[],
    };
    names.into_iter().any(|n| !SWITCHES.contains(&n.as_str()) && prefixes.iter().any(|p| n.starts_with(p)))
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
        Backend::Gcs => {
            let builder = GoogleCloudStorageBuilder::from_env()
                .with_url(&uri.store_url)
                .with_config(GoogleConfigKey::Client(ClientConfigKey::Timeout), &timeout)
                .with_retry(retry);
            let gcloud_file = gcloud_credentials_file().is_some_and(|f| f.exists());
            check_gcs_credentials(&builder, settings.gce_metadata_off.as_deref(), gcloud_file)?;
            Arc::new(builder.build()?)
        }
        Backend::Azure => {
            let mut builder = MicrosoftAzureBuilder::from_env()
                .with_url(&uri.store_url)
                .with_config(AzureConfigKey::Client(ClientConfigKey::Timeout), &timeout)
                .with_retry(retry);
            // An https:// URL's query is its SAS token.
            if let Some(sas) = &uri.query {
                builder = builder.with_config(AzureConfigKey::SasKey, sas);
            }
            check_azure_credentials(&builder, settings.azure_imds_off.as_deref())?;
            Arc::new(builder.build()?)
        }
        // Plain HTTP goes through reqwest (see `Store::Http`).
        Backend::Http => {
            return Err(object_store::Error::NotImplemented { operation: "HTTP".into(), implementer: "spool".into() })
        }
    })
}

/// An object with what tells one content of it from another: its size,
/// its modification time and its ETag (sanitize_ingest's identities,
/// source/listing.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ObjectIdentity {
    pub(super) key: String,
    pub(super) size: u64,
    /// Nanoseconds since the epoch; 0 where the store gives none.
    pub(super) modified_ns: i64,
    pub(super) etag: Option<String>,
}

impl ObjectIdentity {
    fn of_meta(meta: object_store::ObjectMeta) -> ObjectIdentity {
        ObjectIdentity {
            key: meta.location.to_string(),
            size: meta.size,
            modified_ns: meta.last_modified.timestamp_nanos_opt().unwrap_or(0),
            etag: meta.e_tag,
        }
    }

    /// An object of the GCS JSON API: sizes are decimal strings, and the
    /// generation stands in for the time (it changes with every write).
    fn of_gcs_json(o: &serde_json::Value) -> Option<ObjectIdentity> {
        let number = |v: &serde_json::Value| v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_u64());
        Some(ObjectIdentity {
            key: o["name"].as_str()?.to_string(),
            size: number(&o["size"]).unwrap_or(0),
            modified_ns: number(&o["generation"]).and_then(|g| i64::try_from(g).ok()).unwrap_or(0),
            etag: o["etag"].as_str().or_else(|| o["md5Hash"].as_str()).map(str::to_string),
        })
    }
}

impl Store {
    /// The objects below `prefix` with their identities (direct children
    /// only unless `recursive`).
    pub(super) async fn list_identities(
        &self,
        prefix: &str,
        recursive: bool,
    ) -> std::result::Result<Vec<ObjectIdentity>, String> {
        match self {
            Store::Object(store) => {
                let prefix = if prefix.is_empty() { None } else { Some(object_path(prefix)?) };
                let metas: Vec<object_store::ObjectMeta> = if recursive {
                    store.list(prefix.as_ref()).try_collect().await.map_err(|e| e.to_string())?
                } else {
                    store.list_with_delimiter(prefix.as_ref()).await.map_err(|e| e.to_string())?.objects
                };
                Ok(metas.into_iter().map(ObjectIdentity::of_meta).collect())
            }
            Store::Http { .. } => Err("HTTP has no directory listing".to_string()),
            Store::GcsEmulator { client, host, bucket } => {
                let mut out = Vec::new();
                gcs_emulator_pages(client, host, bucket, prefix, recursive, |doc| {
                    out.extend(doc["items"].as_array().into_iter().flatten().filter_map(ObjectIdentity::of_gcs_json));
                })
                .await?;
                Ok(out)
            }
        }
    }

    /// One object's identity, or `None` when there is no such object.
    pub(super) async fn head_identity(&self, key: &str) -> std::result::Result<Option<ObjectIdentity>, String> {
        match self {
            Store::Object(store) => match store.head(&object_path(key)?).await {
                Ok(meta) => Ok(Some(ObjectIdentity::of_meta(meta))),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e.to_string()),
            },
            Store::Http { .. } => Err("HTTP objects are not listed".to_string()),
            Store::GcsEmulator { client, host, bucket } => {
                let url = format!("{host}/storage/v1/b/{}/o/{}", percent_encode(bucket), percent_encode(key));
                let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
                match response.status() {
                    s if s.is_success() => {
                        let body = response.text().await.map_err(|e| e.to_string())?;
                        let doc: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
                        Ok(ObjectIdentity::of_gcs_json(&doc))
                    }
                    reqwest::StatusCode::NOT_FOUND => Ok(None),
                    s => Err(format!("GET {url}: {s}")),
                }
            }
        }
    }
}

/// Lists `prefix` of a GCS emulator's bucket through its JSON API, one page
/// at a time, handing each page's document to `page_doc` (object_store does
/// not speak that API).
async fn gcs_emulator_pages(
    client: &reqwest::Client,
    host: &str,
    bucket: &str,
    prefix: &str,
    recursive: bool,
    mut page_doc: impl FnMut(&serde_json::Value),
) -> std::result::Result<(), String> {
    let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
    let delimiter = if recursive { "" } else { "delimiter=%2F&" };
    let mut page: Option<String> = None;
    loop {
        let mut url =
            format!("{host}/storage/v1/b/{}/o?{delimiter}prefix={}", percent_encode(bucket), percent_encode(&prefix));
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
        page_doc(&doc);
        match doc["nextPageToken"].as_str() {
            Some(t) if !t.is_empty() => page = Some(t.to_string()),
            _ => return Ok(()),
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_is_configured_by_its_own_variables_only() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().into_iter();
        assert!(configured_in(Backend::S3, names(&["AWS_ENDPOINT_URL"])));
        assert!(!configured_in(Backend::S3, names(&["AWS_EC2_METADATA_DISABLED", "AZURE_STORAGE_ACCOUNT_NAME"])));
        assert!(configured_in(Backend::Gcs, names(&["STORAGE_EMULATOR_HOST"])));
        assert!(!configured_in(Backend::Azure, names(&["AZURE_TOKEN_CREDENTIALS"])));
        assert!(!configured_in(Backend::Http, names(&["AWS_ENDPOINT_URL"])));
    }
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
    fn the_metadata_switches_read_as_google_and_azure_libraries_read_them() {
        assert_eq!(gce_metadata_off(Some("true"), None).as_deref(), Some("NO_GCE_CHECK=true"));
        assert_eq!(gce_metadata_off(Some(" TRUE "), None).as_deref(), Some("NO_GCE_CHECK= TRUE "));
        assert_eq!(gce_metadata_off(None, Some("none")).as_deref(), Some("METADATA_SERVER_DETECTION=none"));
        assert_eq!(gce_metadata_off(Some("false"), Some("assume-present")), None);
        assert_eq!(gce_metadata_off(None, Some("ping-only")), None);
        assert_eq!(gce_metadata_off(None, None), None);
        for off in ["dev", "DEV", "EnvironmentCredential", "AzureCliCredential", "workloadidentitycredential", "tyop"] {
            assert_eq!(azure_imds_off(Some(off)), Some(format!("AZURE_TOKEN_CREDENTIALS={off}")), "{off}");
        }
        for on in ["prod", "Prod", "ManagedIdentityCredential", "managedidentitycredential", "", " "] {
            assert_eq!(azure_imds_off(Some(on)), None, "{on}");
        }
        assert_eq!(azure_imds_off(None), None);
    }

    #[test]
    fn gcs_without_credentials_and_metadata_off_fails_at_once() {
        let bare = GoogleCloudStorageBuilder::new().with_bucket_name("b");
        let e = check_gcs_credentials(&bare, Some("NO_GCE_CHECK=true"), false).unwrap_err().to_string();
        assert!(e.contains("no GCS credentials: NO_GCE_CHECK=true is set"), "{e}");
        assert!(e.contains("GOOGLE_SERVICE_ACCOUNT") && e.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{e}");
        // The metadata server allowed: object_store's chain decides.
        assert!(check_gcs_credentials(&bare, None, false).is_ok());
        // Any other source is enough.
        assert!(check_gcs_credentials(&bare, Some("NO_GCE_CHECK=true"), true).is_ok(), "gcloud's file");
        for (key, value) in [
            (GoogleConfigKey::ServiceAccount, "/k.json"),
            (GoogleConfigKey::ServiceAccountKey, "{}"),
            (GoogleConfigKey::ApplicationCredentials, "/adc.json"),
            (GoogleConfigKey::SkipSignature, "true"),
        ] {
            let b = bare.clone().with_config(key, value);
            assert!(check_gcs_credentials(&b, Some("NO_GCE_CHECK=true"), false).is_ok(), "{key:?}");
        }
        let signed = bare.clone().with_config(GoogleConfigKey::SkipSignature, "false");
        assert!(check_gcs_credentials(&signed, Some("NO_GCE_CHECK=true"), false).is_err());
        // Booleans as object_store parses them, not only "true".
        let unsigned = bare.clone().with_config(GoogleConfigKey::SkipSignature, "TRUE");
        assert!(check_gcs_credentials(&unsigned, Some("NO_GCE_CHECK=true"), false).is_ok());
    }

    #[test]
    fn azure_without_credentials_and_managed_identity_off_fails_at_once() {
        let bare = MicrosoftAzureBuilder::new().with_account("acct").with_container_name("c");
        let e = check_azure_credentials(&bare, Some("AZURE_TOKEN_CREDENTIALS=dev")).unwrap_err().to_string();
        assert!(e.contains("no Azure credentials: AZURE_TOKEN_CREDENTIALS=dev leaves managed identity out"), "{e}");
        assert!(e.contains("AZURE_STORAGE_ACCOUNT_KEY") && e.contains("AZURE_CLIENT_SECRET"), "{e}");
        assert!(check_azure_credentials(&bare, None).is_ok());
        let off = Some("AZURE_TOKEN_CREDENTIALS=dev");
        for (keys, enough) in [
            (&[(AzureConfigKey::UseEmulator, "true")][..], true),
            (&[(AzureConfigKey::AccessKey, "a2V5")], true),
            (&[(AzureConfigKey::SasKey, "sv=1&sig=s")], true),
            (&[(AzureConfigKey::Token, "t")], true),
            (&[(AzureConfigKey::UseAzureCli, "true")], true),
            (&[(AzureConfigKey::SkipSignature, "true")], true),
            (
                &[
                    (AzureConfigKey::ClientId, "i"),
                    (AzureConfigKey::ClientSecret, "s"),
                    (AzureConfigKey::AuthorityId, "t"),
                ],
                true,
            ),
            (
                &[
                    (AzureConfigKey::ClientId, "i"),
                    (AzureConfigKey::AuthorityId, "t"),
                    (AzureConfigKey::FederatedTokenFile, "/f"),
                ],
                true,
            ),
            // Half a source is none.
            (&[(AzureConfigKey::ClientId, "i"), (AzureConfigKey::AuthorityId, "t")], false),
            (&[(AzureConfigKey::UseEmulator, "1")], true),
            (&[(AzureConfigKey::UseEmulator, "false")], false),
            (&[(AzureConfigKey::AccessKey, "")], false),
        ] {
            let b = keys.iter().fold(bare.clone(), |b, (k, v)| b.with_config(*k, *v));
            assert_eq!(check_azure_credentials(&b, off).is_ok(), enough, "{keys:?}");
        }
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
            gce_metadata_off: None,
            azure_imds_off: None,
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
