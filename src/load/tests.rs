use super::fs_memo::absolute_spelling;
use super::*;

fn loader(root: &Path) -> Loader {
    Loader::new(Arc::new(SourceMap::new(root)))
}

#[cfg(unix)]
#[test]
fn a_file_reached_by_two_paths_is_read_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("roles/r/tasks/main.yml");
    std::fs::create_dir_all(real.parent().expect("parent")).expect("mkdir");
    std::fs::write(&real, "- debug: msg=hi\n").expect("write");
    std::fs::create_dir_all(dir.path().join("extra")).expect("mkdir");
    std::os::unix::fs::symlink("../roles", dir.path().join("extra/roles")).expect("link");
    let link = dir.path().join("extra/roles/r/tasks/main.yml");
    let l = loader(dir.path());
    // The link comes first in order; the shorter path is the one read.
    l.preload(&[link.clone(), real.clone()], true);
    assert_eq!(l.all().len(), 1);
    assert_eq!(l.all()[0].0, real);
    assert_eq!(l.status(&link), (true, Some(16)));
    assert_eq!(l.all().len(), 1, "status does not parse the alias");
    let (a, b) = (l.yaml(&real), l.yaml(&link));
    assert_ne!(a.id, b.id);
    assert_eq!(a.text, b.text);
    assert_eq!(b.doc().map(|d| d.span.file), Some(b.id));
    assert_eq!(l.all().len(), 2);
}

#[test]
fn a_planned_file_is_read_once_whoever_needs_it_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.yml"), dir.path().join("b.yml"));
    std::fs::write(&a, "x: 1\n").expect("write");
    std::fs::write(&b, "- [\n").expect("write");
    let l = loader(dir.path());
    let plan = l.plan(&[a.clone(), b.clone()], true);
    assert!(l.all().is_empty(), "planning reads nothing");
    // The sizes the run counts come from the plan, without reading.
    assert_eq!(l.yaml_size(&a), Some(5));
    assert_eq!(l.yaml_size(&b), Some(4));
    assert!(l.all().is_empty());
    // The model reaches `a` before the parallel fill does.
    let first = l.yaml(&a);
    assert_eq!(l.all().len(), 1);
    l.fill(&plan);
    assert_eq!(l.all().len(), 2);
    assert!(Arc::ptr_eq(&first, &l.yaml(&a)), "read once");
    // The planned files' problems are the loader's; a file read later
    // reports its own where it is used.
    let c = dir.path().join("c.yml");
    std::fs::write(&c, "- [\n").expect("write");
    assert!(!l.yaml(&c).ok());
    let diags = l.diagnostics();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].span.file, l.yaml(&b).id);
}

#[test]
fn the_file_system_is_asked_once_per_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("t.j2");
    std::fs::write(&f, "one").expect("write");
    let fs = FsMemo::default();
    assert_eq!(fs.stat(&f), Stat::File(3));
    assert!(fs.is_file(&f) && !fs.is_dir(&f));
    assert!(fs.is_dir(dir.path()));
    assert_eq!(fs.stat(&dir.path().join("missing")), Stat::Missing);
    assert_eq!(fs.text_bounded(&f).as_deref(), Some("one"));
    assert_eq!(
        fs.canonical(&dir.path().join("x/../t.j2")),
        dir.path().join("x/../t.j2"),
        "unresolvable: the path itself"
    );
    // Later changes are not seen: one consistent view per run.
    std::fs::write(&f, "two, longer").expect("write");
    assert_eq!(fs.stat(&f), Stat::File(3));
    assert_eq!(fs.text_bounded(&f).as_deref(), Some("one"));
    assert_eq!(FsMemo::default().stat(&f), Stat::File(11));
}

#[test]
fn nothing_is_below_what_is_not_a_directory() {
    let dir = crate::check::testing::tree(&[("r/tasks/main.yml", "- x\n")]);
    let d = dir.path();
    let fs = FsMemo::default();
    assert_eq!(fs.stat(&d.join("r/vars/main.yml")), Stat::Missing);
    assert_eq!(fs.stat(&d.join("r/tasks/main.yml/x")), Stat::Missing);
    assert_eq!(fs.stat(&d.join("r/tasks/main.yml")), Stat::File(4));
    // Directories a walk listed are taken as they were listed.
    let walked = FsMemo::default();
    walked.know_dirs(vec![d.join("listed")]);
    assert!(walked.is_dir(&d.join("listed")));
    assert_eq!(walked.stat(&d.join("listed/x")), Stat::Missing);
    // A path known to name the same file as another is answered for it.
    walked.know_same([(d.join("link/main.yml"), d.join("r/tasks/main.yml"))]);
    assert_eq!(walked.stat(&d.join("link/main.yml")), Stat::File(4));
    assert_eq!(
        walked.identity(&d.join("link/main.yml")),
        walked.identity(&d.join("r/tasks/main.yml"))
    );
    assert_eq!(
        walked.identity(&d.join("link/main.yml")).is_some(),
        cfg!(unix)
    );
}

/// A relative directory's listing is also known below the working
/// directory, spelled as `resolve` builds paths; one that climbs with
/// `..` or is absolute is known as spelled only.
#[test]
#[cfg(unix)]
fn relative_listings_are_known_by_their_absolute_spelling() {
    let cwd = Path::new("/w/tree");
    assert_eq!(
        absolute_spelling(cwd, Path::new("./roles/r/tasks")),
        Some(PathBuf::from("/w/tree/roles/r/tasks"))
    );
    assert_eq!(
        absolute_spelling(cwd, Path::new("roles/./r")),
        Some(PathBuf::from("/w/tree/roles/r"))
    );
    assert_eq!(absolute_spelling(cwd, Path::new(".")), Some(cwd.into()));
    assert_eq!(absolute_spelling(cwd, Path::new("../other/roles")), None);
    assert_eq!(absolute_spelling(cwd, Path::new("/abs/roles")), None);
}

/// What a walk's listing says is taken as it was listed: a name it
/// does not hold is missing (on Linux), one it lists as a file or a
/// directory is not a link; a file's size still comes from `stat`.
#[test]
fn listed_directories_answer_for_their_entries() {
    let dir = crate::check::testing::tree(&[("r/tasks/main.yml", "- x\n")]);
    let d = dir.path().canonicalize().expect("canonical");
    let mut found = Vec::new();
    let sources = SourceMap::new(&d);
    let mut diags = Vec::new();
    for (listed, listing) in crate::discover::discover(
        &d,
        &crate::discover::Excludes::default(),
        &sources,
        &mut diags,
    )
    .listings
    {
        found.push(listed.clone());
        if listed == d.join("r/tasks") {
            let fs = FsMemo::default();
            fs.know_listings(vec![(listed, listing)]);
            // Created after the listing: not seen where absent names
            // are trusted to be absent.
            std::fs::write(d.join("r/tasks/late.yml"), "- y\n").expect("write");
            let late = d.join("r/tasks/late.yml");
            let expected = if cfg!(target_os = "linux") {
                Stat::Missing
            } else {
                Stat::File(4)
            };
            assert_eq!(fs.stat(&late), expected);
            assert_eq!(fs.canonical(&late), late, "unresolvable: the path itself");
            assert_eq!(fs.stat(&d.join("r/tasks/main.yml")), Stat::File(4));
            let main = d.join("r/tasks/main.yml");
            assert_eq!(fs.canonical(&main), main);
            assert_eq!(fs.text_bounded(&main).as_deref(), Some("- x\n"));
            // Outside the listed directory, `stat` answers.
            assert_eq!(fs.stat(&d.join("r/late.yml")), Stat::Missing);
            std::fs::write(d.join("r/late.yml"), "z").expect("write");
            assert_eq!(FsMemo::default().stat(&d.join("r/late.yml")), Stat::File(1));
        }
    }
    assert!(found.contains(&d.join("r/tasks")), "{found:?}");
}

#[cfg(unix)]
#[test]
fn canonical_paths_are_what_canonicalize_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("a/b/c")).expect("mkdir");
    std::fs::write(d.join("a/b/f.yml"), "x").expect("write");
    std::os::unix::fs::symlink("b/c", d.join("a/up")).expect("link");
    std::os::unix::fs::symlink(d.join("a/b"), d.join("abs")).expect("link");
    std::os::unix::fs::symlink("../a/b/f.yml", d.join("a/flink")).expect("link");
    std::os::unix::fs::symlink("nowhere", d.join("dangling")).expect("link");
    let fs = FsMemo::default();
    for rel in [
        "a",
        "a/b/f.yml",
        "a/up",
        "a/up/..",
        "a/up/../f.yml",
        "abs/c/../../b/f.yml",
        "a/flink",
        "a/flink/..",
        "a/b/f.yml/..",
        "a/missing/..",
        "a/missing",
        "dangling",
        "a/./b/../b/c",
        "../",
    ] {
        let p = d.join(rel);
        let want = p.canonicalize().unwrap_or_else(|_| p.clone());
        assert_eq!(fs.canonical(&p), want, "{rel}");
        assert_eq!(fs.canonical(&p), want, "{rel}, memoized");
    }
}

#[test]
fn bounded_text_reads_skip_large_binary_and_special_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ok = dir.path().join("ok.j2");
    std::fs::write(&ok, b"a \xff b").expect("write");
    assert_eq!(read_text_bounded(&ok).as_deref(), Some("a \u{fffd} b"));
    let bin = dir.path().join("bin.j2");
    std::fs::write(&bin, b"a\0b").expect("write");
    assert_eq!(read_text_bounded(&bin), None);
    let big = dir.path().join("big.j2");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(MAX_FILE_SIZE + 1).expect("set_len");
    assert_eq!(read_text_bounded(&big), None);
    assert_eq!(read_text_bounded(dir.path()), None);
    assert_eq!(read_text_bounded(Path::new("/dev/zero")), None);
}

#[test]
fn total_budget_keeps_the_first_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = "a: b\n".repeat(usize::try_from(MAX_FILE_SIZE).unwrap() / 5 - 1);
    let paths: Vec<PathBuf> = (0..10)
        .map(|i| {
            let p = dir.path().join(format!("{i:02}.yml"));
            std::fs::write(&p, &big).expect("write");
            p
        })
        .collect();
    let total = 32 * 1024 * 1024;
    let l = Loader::with_total(Arc::new(SourceMap::new(dir.path())), total);
    l.preload(&paths, false);
    let fits = usize::try_from(total / big.len() as u64).unwrap();
    for (i, p) in paths.iter().enumerate() {
        let f = l.yaml(p);
        assert_eq!(f.text.is_some(), i < fits, "{i}");
        if i >= fits {
            assert_eq!(f.diagnostics[0].code, code::TOO_LARGE);
        }
    }
}

#[cfg(unix)]
#[test]
fn devices_are_not_read() {
    let l = loader(Path::new("/"));
    let f = l.yaml(Path::new("/dev/zero"));
    assert!(f.text.is_none());
    assert_eq!(f.diagnostics[0].code, code::IO);
}
