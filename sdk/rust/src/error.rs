//! Errors of plugin calls (sdk/ABI.md §2): a message for the task's status trace, and whether the
//! host may repeat the call.

use std::fmt;

/// The error of a plugin call.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    msg: String,
    retriable: bool,
    /// For record failures of transformations and predicates: the Java exception class the host
    /// reports (empty: DataException, as Kafka's transformations throw).
    class: String,
    /// For errors of file operations: what kind of I/O error it was.
    io_kind: Option<std::io::ErrorKind>,
    /// For config errors: the setting it is about ("" for the config as a whole).
    key: Option<String>,
}

/// The result of a plugin call.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with a message.
    pub fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into(), retriable: false, class: String::new(), io_kind: None, key: None }
    }

    /// Marks the error retriable: the host may repeat the call later (errors.retry.timeout).
    pub fn retriable(mut self) -> Error {
        self.retriable = true;
        self
    }

    /// Whether the error was marked retriable.
    pub fn is_retriable(&self) -> bool {
        self.retriable
    }

    /// Sets the Java exception class reported for a failed record.
    pub fn with_class(mut self, class: impl Into<String>) -> Error {
        self.class = class.into();
        self
    }

    pub fn class(&self) -> &str {
        &self.class
    }

    /// An error about the setting `key`, worded as Kafka's ConfigException:
    /// "Invalid value <value> for configuration <key>: <msg>" (the value hidden for a password).
    pub fn invalid_config(key: &str, value: &str, msg: &str) -> Error {
        let shown = if crate::config::secret(key, crate::config::ConfigType::String) { crate::config::HIDDEN } else { value };
        Error::config(key, format!("Invalid value {} for configuration {}: {}", shown, key, msg))
    }

    /// An error about the setting `key` with a message of its own.
    pub fn config(key: &str, msg: impl Into<String>) -> Error {
        let mut e = Error::new(msg);
        e.key = Some(key.to_string());
        e
    }

    /// The setting a config error is about.
    pub fn config_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// An I/O error with a message that says what was being done: "reading /data/in.txt: ...".
    pub fn io(context: impl fmt::Display, e: &std::io::Error) -> Error {
        let mut err = Error::new(format!("{}: {}", context, io_text(e)));
        err.io_kind = Some(e.kind());
        err
    }

    /// The kind of I/O error, if it is one.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.io_kind
    }

    /// Whether it is an I/O error saying that a file does not exist.
    pub fn is_not_found(&self) -> bool {
        self.io_kind == Some(std::io::ErrorKind::NotFound)
    }

    /// The message prefixed with more context, keeping the kind: "Couldn't open x: <msg>".
    pub fn context(mut self, prefix: impl fmt::Display) -> Error {
        self.msg = format!("{}: {}", prefix, self.msg);
        self
    }

    pub fn message(&self) -> &str {
        &self.msg
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error::new(s)
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Error {
        Error::new(s)
    }
}

/// The text of an I/O error as the Go SDK shows it ("no such file or directory"), without Rust's
/// " (os error N)" suffix.
pub fn io_text(e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => "no such file or directory".to_string(),
        PermissionDenied => "permission denied".to_string(),
        AlreadyExists => "file exists".to_string(),
        Unsupported => "not supported".to_string(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_lowercase(),
                None => s,
            }
        }
    }
}
