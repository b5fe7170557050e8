use super::walk::{collect, walk};
#[test]
fn below_by_bytes_agrees_with_strip_prefix() {
    use std::path::Path;
    let dirs = [
        "/t", "/t/", "t", "./t", ".", "/", "/t/x/..", "t//u", "/t/.", "/t/a",
    ];
    let paths = [
        "/t/a.yml",
        "/t/a/b.yml",
        "/t//a.yml",
        "/t/./a.yml",
        "/t/a/./b",
        "/t/a//b",
        "/t/a/",
        "/t",
        "/t/",
        "t/a",
        "./t/a",
        "a",
        "/tt/a",
        "t//u/v",
        "t/u/v",
        "/t/x/../a",
        "/t/a/b/c",
        "/t/a\\b",
    ];
    for d in dirs {
        for p in paths {
            let (d, p) = (Path::new(d), Path::new(p));
            // As bytes: `Path`'s equality compares components.
            assert_eq!(
                super::links::below(p, d).map(Path::as_os_str),
                p.strip_prefix(d).ok().map(Path::as_os_str),
                "{} below {}",
                p.display(),
                d.display()
            );
        }
    }
}

use super::*;

/// A scratch tree with these files (each `- x`).
fn tree(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in files {
        let path = dir.path().join(f);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "- x\n").expect("write");
    }
    dir
}

#[test]
fn classifies_role_parts() {
    assert_eq!(
        classify("roles/kubernetes/preinstall/tasks/main.yml"),
        FileKind::Tasks
    );
    assert_eq!(
        classify("roles/k/defaults/main/a.yml"),
        FileKind::RoleDefaults
    );
    assert_eq!(classify("roles/k/defaults/main"), FileKind::RoleDefaults);
    assert_eq!(classify("roles/k/templates/x.conf.j2"), FileKind::Template);
    assert_eq!(classify("roles/k/meta/main.yml"), FileKind::RoleMeta);
    assert_eq!(
        classify("inventory/sample/group_vars/all/all.yml"),
        FileKind::GroupVars
    );
    assert_eq!(classify("inventory/sample/hosts.yaml"), FileKind::Inventory);
    assert_eq!(
        classify("inventory/sample/inventory.ini"),
        FileKind::Inventory
    );
    assert_eq!(classify("cluster.yml"), FileKind::Yaml);
    assert_eq!(classify("roles/k/files/x.yml"), FileKind::Other);
}

#[cfg(unix)]
#[test]
fn links_out_of_the_tree_are_not_walked() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("site.yml"), "- hosts: all\n").expect("write");
    std::os::unix::fs::symlink("/usr", dir.path().join("vendor")).expect("link");
    let sources = SourceMap::new(dir.path());
    let mut diags = Vec::new();
    let found = discover(dir.path(), &Excludes::default(), &sources, &mut diags);
    assert_eq!(found.files.len(), 1);
    assert_eq!(diags.len(), 1);
    assert!(diags[0].message.contains("outside the tree"));
}

#[test]
fn files_and_listed_directories_at_every_depth() {
    let dir = tree(&[
        "site.yml",
        "roles/README",
        "roles/r/tasks/main.yml",
        "skip/x.yml",
    ]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("roles/.git")).expect("mkdir");
    let sources = SourceMap::new(d);
    let mut diags = Vec::new();
    let found = discover(d, &Excludes::new(&["skip/".into()]), &sources, &mut diags);
    let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(
        files,
        ["roles/README", "roles/r/tasks/main.yml", "site.yml"]
    );
    assert_eq!(found.files[1].kind, FileKind::Tasks);
    let mut dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
    dirs.sort();
    // The root, the listed `roles/` and the walked directories; not the
    // excluded or skipped ones.
    assert_eq!(dirs, [".", "roles", "roles/r", "roles/r/tasks"]);
    assert!(diags.is_empty(), "{diags:?}");
}

/// Directories listed and split at every depth find what one walk from
/// the root finds: files, directories and problems, below links
/// deeper down too, past the depth where splitting stops.
#[cfg(unix)]
#[test]
fn split_listings_find_what_one_walk_finds_at_every_depth() {
    let dir = tree(&[
        "roles/apps/a/b/c/d/tasks/main.yml",
        "roles/apps/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/deep.yml",
        "roles/apps/a/b/skip/x.yml",
        "roles/apps/a/.git/y.yml",
        "roles/apps/a/b/kept.yml",
        "roles/net/defaults/main/one.yml",
        "roles/net/defaults/main/two.yml",
        "inventory/sample/group_vars/all.yml",
        "contrib/t/x/notes.txt",
    ]);
    let d = dir.path();
    // Links below the second level: to a directory of the tree, to an
    // ancestor (a loop), out of the tree, and dangling.
    std::os::unix::fs::symlink(
        "../../../inventory/sample/group_vars",
        d.join("contrib/t/x/group_vars"),
    )
    .expect("link");
    std::os::unix::fs::symlink("../..", d.join("roles/apps/a/b/up")).expect("link");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("o.yml"), "- x\n").expect("write");
    std::os::unix::fs::symlink(outside.path(), d.join("roles/net/defaults/out")).expect("link");
    std::os::unix::fs::symlink("nowhere", d.join("roles/net/defaults/main/gone.yml"))
        .expect("link");
    let excludes = Excludes::new(&["roles/apps/a/b/skip".into()]);
    let sources = SourceMap::new(d);
    let mut diags = Vec::new();
    let found = discover(d, &excludes, &sources, &mut diags);
    // The same tree walked whole, in one walk from the root.
    let canonical = d.canonicalize().expect("canonical");
    let mut once = Vec::new();
    let reference = collect(
        vec![walk(d, 0, d, &[canonical], &excludes, &sources)],
        &mut once,
    );
    let rels = |f: &Discovered| -> Vec<(String, FileKind)> {
        f.files.iter().map(|x| (x.rel.clone(), x.kind)).collect()
    };
    assert_eq!(rels(&found), rels(&reference));
    assert!(
        found
            .files
            .iter()
            .any(|f| f.rel == "contrib/t/x/group_vars/all.yml")
    );
    assert!(found.files.iter().any(|f| f.rel.ends_with("r/deep.yml")));
    let mut dirs: Vec<&PathBuf> = found.dirs.iter().collect();
    let mut reference_dirs: Vec<&PathBuf> = reference.dirs.iter().collect();
    dirs.sort();
    dirs.dedup();
    reference_dirs.sort();
    reference_dirs.dedup();
    assert_eq!(dirs, reference_dirs);
    let messages = |ds: &[Diagnostic]| -> Vec<String> {
        let mut m: Vec<String> = ds.iter().map(|g| g.message.clone()).collect();
        m.sort();
        m
    };
    assert_eq!(messages(&diags), messages(&once));
    assert_eq!(diags.len(), 3, "{diags:?}");
    // Each listing holds what the directory holds, links and skipped
    // or excluded entries included, each as `read_dir` types it.
    assert!(found.listings.iter().any(|(l, _)| l == d));
    assert!(found.listings.len() > 10, "{}", found.listings.len());
    for (listed, listing) in &found.listings {
        assert!(found.dirs.contains(listed), "{}", listed.display());
        let mut names = 0;
        for e in std::fs::read_dir(listed).expect("read_dir") {
            let e = e.expect("entry");
            let t = e.file_type().expect("type");
            let kind = if t.is_file() {
                Listed::File
            } else if t.is_dir() {
                Listed::Dir
            } else {
                Listed::Other
            };
            assert_eq!(listing.get(&e.file_name()), Some(kind), "{:?}", e.path());
            names += 1;
        }
        assert_eq!(listing.ends.len(), names);
    }
    let listing_of = |rel: &str| {
        let dir = d.join(rel);
        &found.listings.iter().find(|(l, _)| *l == dir).expect(rel).1
    };
    let defaults = listing_of("roles/net/defaults");
    assert_eq!(defaults.get("out".as_ref()), Some(Listed::Other));
    assert_eq!(defaults.get("main".as_ref()), Some(Listed::Dir));
    assert_eq!(defaults.get("mai".as_ref()), None);
    assert_eq!(
        listing_of("roles/apps/a/b").get("skip".as_ref()),
        Some(Listed::Dir)
    );
    assert_eq!(
        listing_of("roles/apps/a").get(".git".as_ref()),
        Some(Listed::Dir)
    );
    // Below a skipped or excluded directory nothing is listed.
    assert!(
        !found
            .listings
            .iter()
            .any(|(l, _)| l.starts_with(d.join("roles/apps/a/.git"))
                || l.starts_with(d.join("roles/apps/a/b/skip")))
    );
}

#[test]
fn a_listing_finds_each_name_it_holds_and_no_other() {
    let names = [
        "main.yml",
        "main",
        "a",
        "main.yaml",
        "b.yml",
        "ma",
        "zz",
        "Main.yml",
    ];
    let entries: Vec<(PathBuf, Listed)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let kind = [Listed::File, Listed::Dir, Listed::Other][i % 3];
            (Path::new("/d").join(n), kind)
        })
        .collect();
    let l = Listing::of(Path::new("/d"), &entries);
    for (p, kind) in &entries {
        assert_eq!(l.get(p.file_name().expect("name")), Some(*kind), "{p:?}");
    }
    for absent in [
        "",
        "m",
        "mai",
        "main.y",
        "main.yml.j2",
        "MAIN.YML",
        "zzz",
        "0",
    ] {
        assert_eq!(l.get(absent.as_ref()), None, "{absent}");
    }
    assert_eq!(Listing::of(Path::new("/d"), &[]).get("x".as_ref()), None);
}

/// A link to a directory of the tree, below a top-level directory, is
/// walked as the whole walk would walk it (its entries split in
/// parallel): every file under the link's path, the link listed as a
/// directory, a loop below it reported, and an excluded link skipped.
#[cfg(unix)]
#[test]
fn links_to_directories_of_the_tree_are_walked_through() {
    let dir = tree(&["roles/a/tasks/main.yml", "roles/b/x.yml", "roles/top.yml"]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("extra")).expect("mkdir");
    std::os::unix::fs::symlink("../roles", d.join("extra/roles")).expect("link");
    std::os::unix::fs::symlink("../roles", d.join("extra/skipped")).expect("link");
    // A loop below the link: back to the directory it points to.
    std::os::unix::fs::symlink("..", d.join("roles/b/up")).expect("link");
    let sources = SourceMap::new(d);
    let mut diags = Vec::new();
    let found = discover(
        d,
        &Excludes::new(&["extra/skipped".into()]),
        &sources,
        &mut diags,
    );
    let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(
        files,
        [
            "extra/roles/a/tasks/main.yml",
            "extra/roles/b/x.yml",
            "extra/roles/top.yml",
            "roles/a/tasks/main.yml",
            "roles/b/x.yml",
            "roles/top.yml",
        ]
    );
    assert_eq!(found.files[0].kind, FileKind::Tasks);
    // Taken from the walk of the target: an alias of the same file
    // there. `b/` holds a link, so it was walked again; `top.yml` was
    // listed.
    assert_eq!(
        found.files[0].same_as.as_deref(),
        Some(d.join("roles/a/tasks/main.yml").as_path())
    );
    assert!(found.files[1..].iter().all(|f| f.same_as.is_none()));
    let dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
    assert!(dirs.iter().any(|p| p == "extra/roles"), "{dirs:?}");
    assert!(dirs.iter().any(|p| p == "extra/roles/a/tasks"), "{dirs:?}");
    let loops = diags
        .iter()
        .filter(|g| g.message.contains("symbolic link loop"))
        .count();
    // `roles/b/up` seen from `roles/` and from `extra/roles/`.
    assert_eq!(loops, 2, "{diags:?}");
}

/// Below a link to a directory of the tree, a directory the tree's walk
/// listed is taken from that walk, renamed, only where nothing below it
/// depends on the path (a link, an excluded entry): the result is the
/// walk through the link, entry for entry.
#[cfg(unix)]
#[test]
fn listings_reached_through_a_link_are_reused_only_where_the_path_does_not_matter() {
    let dir = tree(&[
        "roles/plain/tasks/main.yml",
        "roles/plain/defaults/main.yml",
        "roles/linked/tasks/main.yml",
        "roles/cut/tasks/main.yml",
        "roles/other/x.yml",
    ]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("extra")).expect("mkdir");
    std::os::unix::fs::symlink("../roles", d.join("extra/roles")).expect("link");
    // A link below the target: walked through under each name.
    std::os::unix::fs::symlink("../other", d.join("roles/linked/dep")).expect("link");
    let sources = SourceMap::new(d);
    let mut diags = Vec::new();
    // Excluded under the link's name only.
    let found = discover(
        d,
        &Excludes::new(&["extra/roles/cut/tasks".into()]),
        &sources,
        &mut diags,
    );
    let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(
        files,
        [
            "extra/roles/linked/dep/x.yml",
            "extra/roles/linked/tasks/main.yml",
            "extra/roles/other/x.yml",
            "extra/roles/plain/defaults/main.yml",
            "extra/roles/plain/tasks/main.yml",
            "roles/cut/tasks/main.yml",
            "roles/linked/dep/x.yml",
            "roles/linked/tasks/main.yml",
            "roles/other/x.yml",
            "roles/plain/defaults/main.yml",
            "roles/plain/tasks/main.yml",
        ]
    );
    let kinds: Vec<FileKind> = found.files.iter().map(|f| f.kind).collect();
    assert_eq!(kinds[3], FileKind::RoleDefaults, "{files:?}");
    assert_eq!(kinds[4], FileKind::Tasks, "{files:?}");
    let dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
    for listed in [
        "extra/roles",
        "extra/roles/plain/defaults",
        "extra/roles/linked/dep",
        "extra/roles/cut",
    ] {
        assert!(dirs.iter().any(|p| p == listed), "{listed}: {dirs:?}");
    }
    assert!(
        !dirs.iter().any(|p| p == "extra/roles/cut/tasks"),
        "{dirs:?}"
    );
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn excludes_paths_and_globs() {
    let ex = Excludes::new(&["contrib/".into(), "tests/**/*.yml".into(), "*.bak".into()]);
    assert!(ex.matches("contrib/x/y.yml"));
    assert!(ex.matches("tests/a/b.yml"));
    assert!(ex.matches("a.bak"));
    assert!(!ex.matches("roles/a.yml"));
}
