//! A task's view of the worker: where it runs, the log, stored offsets, and the files the operator
//! granted with plugin.fs.allow.

use crate::config::go_quote;
use crate::error::Error;
use crate::host::{self, Level};
use crate::json::{self, Value};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;

/// Tells a task where it runs and gives it access to the worker.
#[derive(Clone, Debug, Default)]
pub struct TaskContext {
    connector: String,
    task: i64,
    fs_allow: Vec<String>,
}

/// How many symbolic links one path may go through, as Linux's limit.
const MAX_LINKS: usize = 40;

impl TaskContext {
    /// A context for task `task` of `connector` that may use the files under `fs_allow`.
    pub fn new(connector: &str, task: i64, fs_allow: &[String]) -> TaskContext {
        let fs_allow = fs_allow.iter().filter(|d| !d.is_empty()).map(|d| clean(d)).collect();
        TaskContext { connector: connector.to_string(), task, fs_allow }
    }

    pub fn connector(&self) -> &str {
        &self.connector
    }

    pub fn task(&self) -> i64 {
        self.task
    }

    /// The directories the task may use.
    pub fn fs_allow(&self) -> &[String] {
        &self.fs_allow
    }

    /// Writes a line to the worker log, tagged with the connector and task.
    pub fn log(&self, level: Level, msg: &str) {
        host::log(level, msg)
    }

    /// The stored source offset for a source partition (a JSON object), if one is stored.
    pub fn offset(&self, partition: &Value) -> Result<Option<BTreeMap<String, Value>>, Error> {
        let p = partition.to_json();
        let b = match host::offset_get(p.as_bytes())? {
            None => return Ok(None),
            Some(b) => b,
        };
        match json::parse(&b) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            Ok(_) => Err(Error::new(format!("stored offset for source partition {} is not a JSON object: not an object", p))),
            Err(e) => Err(Error::new(format!("stored offset for source partition {} is not a JSON object: {}", p, e))),
        }
    }

    /// Checks that `path` lies in a directory granted by plugin.fs.allow and returns it cleaned and
    /// absolute (relative to "/", the working directory of a module). It looks at the text only;
    /// `open_file` also follows the path's symbolic links.
    pub fn check_path(&self, path: &str) -> Result<String, Error> {
        let abs = if path.starts_with('/') { clean(path) } else { clean(&format!("/{}", path)) };
        if self.grant_of(&abs).is_none() {
            return Err(self.not_allowed(path, None));
        }
        Ok(abs)
    }

    /// The longest granted directory that holds `abs` (clean and absolute).
    fn grant_of(&self, abs: &str) -> Option<&str> {
        let mut grant: Option<&str> = None;
        for d in &self.fs_allow {
            let holds = abs == d || d == "/" || (abs.starts_with(d.as_str()) && abs.as_bytes().get(d.len()) == Some(&b'/'));
            if holds && grant.map_or(true, |g| d.len() > g.len()) {
                grant = Some(d);
            }
        }
        grant
    }

    fn not_allowed(&self, path: &str, target: Option<&str>) -> Error {
        let granted = if self.fs_allow.is_empty() { "none".to_string() } else { self.fs_allow.join(", ") };
        let msg = match target {
            Some(t) => format!("plugin.fs.allow does not grant access to {}: it leads to {} (granted: {})", go_quote(path), go_quote(t), granted),
            None => format!("plugin.fs.allow does not grant access to {} (granted: {})", go_quote(path), granted),
        };
        Error::new(msg)
    }

    /// Follows the symbolic links in `abs` (clean, absolute, in a grant) one component at a time, as
    /// the kernel does, and returns the path they lead to and the WASI file type there (`None` if
    /// nothing is there, or if it is a granted directory or outside every grant, where the guest
    /// cannot look). The host confines every operation to the grants whatever the guest does; this
    /// is so that a link out is refused with a message naming where it leads, and so that links
    /// between granted directories, absolute ones included, work.
    fn resolve(&self, abs: &str) -> Result<(String, Option<u8>), Error> {
        let mut cur = self.grant_of(abs).unwrap_or("/").to_string();
        let mut rest = abs[cur.len().min(abs.len())..].trim_start_matches('/').to_string();
        let mut ft = None;
        let mut links = 0;
        while !rest.is_empty() {
            let (elem, tail) = match rest.find('/') {
                Some(i) => (rest[..i].to_string(), rest[i + 1..].to_string()),
                None => (rest.clone(), String::new()),
            };
            rest = tail;
            match elem.as_str() {
                "" | "." => continue,
                ".." => {
                    cur = dir(&cur);
                    ft = None;
                    continue;
                }
                _ => {}
            }
            let next = join(&cur, &elem);
            match self.grant_of(&next) {
                None => {
                    cur = next;
                    ft = None;
                    continue;
                }
                Some(g) if g == next => {
                    cur = next;
                    ft = None;
                    continue;
                }
                _ => {}
            }
            let st = match std::fs::symlink_metadata(&next) {
                Ok(st) => st,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((join(&next, &rest), None)),
                Err(e) => return Err(Error::io(format!("lstat {}", next), &e)),
            };
            if !st.file_type().is_symlink() {
                ft = Some(filetype(&next, &st));
                cur = next;
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(Error::new(format!("open {}: too many levels of symbolic links", abs)));
            }
            let target = std::fs::read_link(&next).map_err(|e| Error::io(format!("readlink {}", next), &e))?;
            let target = target.to_string_lossy().into_owned();
            if target.starts_with('/') {
                cur = "/".to_string();
            }
            rest = join_rel(&target, &rest);
        }
        Ok((cur, ft))
    }

    /// Opens a file like `OpenOptions::open` after checking it against the directories granted by
    /// plugin.fs.allow, before and after following its symbolic links, and refuses FIFOs, devices and
    /// sockets. Errors name the path; `Error::is_not_found` tells a missing file.
    pub fn open_file(&self, path: &str, opts: &OpenOptions) -> Result<File, Error> {
        let abs = self.check_path(path)?;
        let (real, ft) = self.resolve(&abs)?;
        if self.grant_of(&real).is_none() {
            return Err(self.not_allowed(path, Some(&real)));
        }
        if let Some(kind) = ft.and_then(special_kind) {
            return Err(special_file(path, kind));
        }
        opts.open(&real).map_err(|e| match e.raw_os_error() {
            // The host refused a path that leaves the grants: the file changed since resolve.
            Some(EPERM) => self.not_allowed(path, None),
            // The host refused a special file that resolve did not see.
            Some(ENOTSUP) => special_file(path, "special file"),
            _ => Error::io(format!("open {}", real), &e),
        })
    }
}

// WASI errno values (wasi_snapshot_preview1), as io::Error::raw_os_error returns them.
const EPERM: i32 = 63;
const ENOTSUP: i32 = 58;

fn special_file(path: &str, kind: &str) -> Error {
    Error::new(format!("{} is a {}, not a regular file: plugins may open only regular files and directories", go_quote(path), kind))
}

// WASI file types.
const FT_UNKNOWN: u8 = 0;
const FT_BLOCK_DEVICE: u8 = 1;
const FT_CHAR_DEVICE: u8 = 2;
const FT_DIRECTORY: u8 = 3;
const FT_REGULAR: u8 = 4;
const FT_SOCKET_DGRAM: u8 = 5;
const FT_SOCKET_STREAM: u8 = 6;
const FT_SYMLINK: u8 = 7;

/// Names what a file of WASI type `ft` is if it is neither a regular file nor a directory. WASI has
/// no file type for a FIFO (nor does the host report a socket's): they come as "unknown".
fn special_kind(ft: u8) -> Option<&'static str> {
    match ft {
        FT_REGULAR | FT_DIRECTORY | FT_SYMLINK => None,
        FT_UNKNOWN => Some("named pipe (FIFO) or socket"),
        FT_SOCKET_DGRAM | FT_SOCKET_STREAM => Some("socket"),
        FT_CHAR_DEVICE => Some("character device"),
        FT_BLOCK_DEVICE => Some("device"),
        _ => Some("special file"),
    }
}

/// The WASI file type of `path`, which `st` describes. Rust's stable std tells regular files,
/// directories and links apart only, so anything else is asked of WASI directly.
fn filetype(path: &str, st: &std::fs::Metadata) -> u8 {
    let t = st.file_type();
    if t.is_file() {
        FT_REGULAR
    } else if t.is_dir() {
        FT_DIRECTORY
    } else if t.is_symlink() {
        FT_SYMLINK
    } else {
        wasi_filetype(path).unwrap_or(FT_UNKNOWN)
    }
}

#[cfg(target_arch = "wasm32")]
fn wasi_filetype(path: &str) -> Option<u8> {
    use std::ffi::CString;
    use std::os::raw::{c_char, c_int};
    extern "C" {
        // wasi-libc: the preopened directory that holds an absolute path, and the path within it.
        fn __wasilibc_find_abspath(path: *const c_char, abs_prefix: *mut *const c_char, relative_path: *mut *const c_char) -> c_int;
    }
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        fn path_filestat_get(fd: i32, flags: i32, path: *const u8, path_len: usize, buf: *mut u8) -> i32;
    }
    let c = CString::new(path).ok()?;
    let mut prefix: *const c_char = std::ptr::null();
    let mut rel: *const c_char = std::ptr::null();
    let fd = unsafe { __wasilibc_find_abspath(c.as_ptr(), &mut prefix, &mut rel) };
    if fd < 0 || rel.is_null() {
        return None;
    }
    let rel = unsafe { std::ffi::CStr::from_ptr(rel) }.to_bytes();
    let rel: &[u8] = if rel.is_empty() { b"." } else { rel };
    let mut stat = [0u8; 64]; // wasi filestat: dev, ino, filetype (byte 16), nlink, size, times
    let errno = unsafe { path_filestat_get(fd, 0, rel.as_ptr(), rel.len(), stat.as_mut_ptr()) };
    if errno != 0 {
        return None;
    }
    Some(stat[16])
}

#[cfg(not(target_arch = "wasm32"))]
fn wasi_filetype(_path: &str) -> Option<u8> {
    None
}

/// filepath.Clean for absolute slash paths and relative ones.
pub fn clean(p: &str) -> String {
    let abs = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for e in p.split('/') {
        match e {
            "" | "." => {}
            ".." => {
                if parts.last().map_or(false, |l| *l != "..") {
                    parts.pop();
                } else if !abs {
                    parts.push("..");
                }
            }
            e => parts.push(e),
        }
    }
    let s = parts.join("/");
    match (abs, s.is_empty()) {
        (true, _) => format!("/{}", s),
        (false, true) => ".".to_string(),
        (false, false) => s,
    }
}

fn join(a: &str, b: &str) -> String {
    if b.is_empty() {
        return clean(a);
    }
    clean(&format!("{}/{}", a, b))
}

/// filepath.Join(target, rest) where target may be absolute or relative.
fn join_rel(target: &str, rest: &str) -> String {
    match (target.is_empty(), rest.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean(rest),
        (false, true) => clean(target),
        (false, false) => clean(&format!("{}/{}", target, rest)),
    }
}

fn dir(p: &str) -> String {
    match p.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => clean(&p[..i]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(clean("/a//b/./c/../d/"), "/a/b/d");
        assert_eq!(clean("/../x"), "/x");
        assert_eq!(dir("/a/b"), "/a");
        let ctx = TaskContext::new("c", 0, &["/data/".to_string(), "/data/in".to_string()]);
        assert_eq!(ctx.check_path("/data/x/../y.txt"), Ok("/data/y.txt".to_string()));
        assert_eq!(ctx.grant_of("/data/in/f"), Some("/data/in"));
        assert_eq!(ctx.grant_of("/datax"), None);
        assert_eq!(
            ctx.check_path("/etc/passwd").unwrap_err().message(),
            r#"plugin.fs.allow does not grant access to "/etc/passwd" (granted: /data, /data/in)"#
        );
    }
}
