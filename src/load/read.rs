//! Files read as text, not as Ansible content (a template a task renders,
//! a file it copies), with the loader's bounds: size, binary, UTF-8.

use super::MAX_FILE_SIZE;
use std::path::Path;

/// Reads a file the analysis looks into without loading it as Ansible
/// content (a template a task renders, a file it copies): regular files of at
/// most [`MAX_FILE_SIZE`] bytes, not binary (NUL bytes); invalid UTF-8 is
/// replaced, as Ansible's template module reads such files too. `None` when
/// the file is not read: its content is then unknown to the analysis.
#[must_use]
pub fn read_text_bounded(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    read_text_of_size(path, m.len())
}

/// [`read_text_bounded`] of a regular file whose size `stat` gave.
pub(super) fn read_text_of_size(path: &Path, len: u64) -> Option<String> {
    if len > MAX_FILE_SIZE {
        return None;
    }
    bounded_text(read_at_most(path, MAX_FILE_SIZE, len).ok()??)
}

/// The text of a file's bytes as [`read_text_bounded`] takes it: `None`
/// for a binary file.
fn bounded_text(bytes: Vec<u8>) -> Option<String> {
    if memchr::memchr(0, &bytes).is_some() {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The file's bytes, or `None` when it holds more than `limit` bytes.
/// `size_hint` (the size `stat` gave) sizes the buffer so that a file is read
/// in one call plus the one that sees its end.
pub(super) fn read_at_most(
    path: &Path,
    limit: u64,
    size_hint: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(usize::try_from(size_hint.min(limit) + 1).unwrap_or(0));
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}
