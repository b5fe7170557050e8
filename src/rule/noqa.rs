//! `# noqa` comments: the lines that carry one, and whether a finding is
//! suppressed by its line's comment.

use super::Finding;
use crate::source::SourceMap;
use crate::{HashMap, HashSet};

/// The lines that carry `# noqa` in each file a finding points at, by
/// 0-based line index. Each file is read once, however many findings it has.
pub(super) fn noqa_lines(
    sources: &SourceMap,
    findings: &[Finding],
) -> HashMap<String, HashMap<usize, String>> {
    let wanted: HashSet<&str> = findings.iter().map(|f| f.file.as_str()).collect();
    let mut out: HashMap<String, HashMap<usize, String>> = HashMap::default();
    for i in 0..sources.len() {
        let s = sources.get(crate::source::FileId(u32::try_from(i).unwrap_or(u32::MAX)));
        // The first file shown under a name is the one findings point at.
        if !wanted.contains(s.display.as_str()) || out.contains_key(&s.display) {
            continue;
        }
        let lines = s
            .text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("# noqa"))
            .map(|(n, l)| (n, l.to_string()))
            .collect();
        out.insert(s.display.clone(), lines);
    }
    out
}

/// `# noqa` or `# noqa: rule-id[, rule-id]` on the finding's line.
pub(super) fn suppressed(noqa: &HashMap<String, HashMap<usize, String>>, f: &Finding) -> bool {
    let Some(line) = noqa
        .get(&f.file)
        .and_then(|lines| lines.get(&(f.line.saturating_sub(1) as usize)))
    else {
        return false;
    };
    let Some(pos) = line.find("# noqa") else {
        return false;
    };
    let rest = line[pos + "# noqa".len()..].trim_start();
    match rest.strip_prefix(':') {
        None => true,
        Some(ids) => ids
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .any(|id| id == f.rule),
    }
}
