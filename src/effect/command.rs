//! Command lines (`command`, `shell`, `raw`, handler commands) read into
//! the same effects the modules have.
//!
//! The line is split the way the shell splits it ([`shell`]), then each
//! simple command is recognised by its program, after the prefixes that
//! only change how it runs (`sudo`, `env VAR=x`, `VAR=x`, `nohup`,
//! `timeout`, a directory before the name); `sh -c '...'`, `bash -c`,
//! `su -c` and a script piped or given as a here-document to `sh` are read
//! in turn. What a command writes through a redirection or `tee` is a file
//! effect; what that file means to the node (sysctl keys, kernel modules)
//! is not read here but by [`super::file::meaning`], as for the file
//! modules.
//!
//! A line with any simple command not recognised also gives one opaque
//! [`EffectKind::Command`] with the whole line, where that command runs,
//! so that a pattern on the line still sees it; so does a line with no
//! effect at all. Look-alikes are not recognised: `echo sysctl -w ...` is
//! an `echo`, `grep swapoff` a `grep`.
//!
//! Timing: what a command does to the running node holds now; what it
//! writes to a file holds now and at boot ([`Timing::BOTH`], as for the
//! file modules); enabling, disabling and masking units hold at boot.

mod files;
mod firewall;
mod kernel;
mod package;
mod probe;
mod sed;
mod service;
mod shell;
mod write;

#[cfg(test)]
mod tests;

use super::{Effect, EffectKind, Known, Timing};
use shell::{Mode, Simple, Word};
use std::borrow::Cow;

/// The effects of a command line run by a shell (`shell`, `raw`), in
/// order.
#[must_use]
pub fn effects(line: &str) -> Vec<Effect> {
    read(line, Mode::Shell)
}

/// The effects of a command line run without a shell (the `command`
/// module, which splits the line into arguments itself): no pipe,
/// redirection or `&&` is interpreted; they are arguments.
#[must_use]
pub fn exec_effects(line: &str) -> Vec<Effect> {
    read(line, Mode::Exec)
}

fn read(line: &str, mode: Mode) -> Vec<Effect> {
    let mut cx = Cx {
        out: Vec::new(),
        opaque_at: None,
    };
    if screen(line) {
        walk(line, mode, 0, &mut cx);
    } else {
        cx.opaque_at = Some(0);
    }
    let Cx { mut out, opaque_at } = cx;
    if opaque_at.is_some() || out.is_empty() {
        let at = opaque_at.unwrap_or(0).min(out.len());
        out.insert(
            at,
            Effect::new(
                EffectKind::Command {
                    line: line.to_string(),
                },
                Timing::NOW,
            ),
        );
    }
    out
}

/// Whether the line may hold something recognised: a redirection out, a
/// connection through `/dev/tcp`, or a word that names a recognised
/// program. Most command lines of a large tree have none, and are opaque
/// without being split.
fn screen(line: &str) -> bool {
    line.contains('>')
        || line.contains("/dev/tcp/")
        || line.contains("/dev/udp/")
        || line
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .any(|w| program(w).is_some_and(Program::screens))
}

/// The effects found so far and where the first command not recognised
/// runs.
struct Cx {
    out: Vec<Effect>,
    opaque_at: Option<usize>,
}

impl Cx {
    fn push(&mut self, kind: EffectKind, timing: Timing) {
        self.out.push(Effect::new(kind, timing));
    }
}

/// A command's standard input or output, as far as known.
#[derive(Debug, Clone)]
enum Stream<'a> {
    /// Nothing is read or written.
    Nothing,
    Text(Cow<'a, str>, Known),
    Unknown,
}

/// What recognising one simple command gave.
struct Step<'a> {
    recognised: bool,
    stdout: Stream<'a>,
    /// Following commands of the pipeline taken in (the filters after a
    /// probe).
    consumes: usize,
}

impl Step<'_> {
    fn done(recognised: bool) -> Self {
        Step {
            recognised,
            stdout: Stream::Unknown,
            consumes: 0,
        }
    }
}

/// One simple command as its recogniser sees it.
struct Call<'c, 'a> {
    /// The program's name, without its directory.
    name: &'c str,
    /// The words after the program.
    args: &'c [Word<'a>],
    /// The simple command's text.
    text: &'a str,
    /// The line (or script) it is part of, and its place there.
    line: &'a str,
    cmds: &'c [Simple<'a>],
    index: usize,
    stdin: Stream<'a>,
    /// Its standard output goes to a file or down a pipe.
    consumed: bool,
}

/// Scripts run by `sh -c` within `sh -c` are read this deep.
const MAX_DEPTH: u8 = 4;

fn walk(line: &str, mode: Mode, depth: u8, cx: &mut Cx) {
    let cmds = shell::split(line, mode);
    let mut piped = Stream::Nothing;
    let mut skip = 0;
    for (index, c) in cmds.iter().enumerate() {
        let stdin = match &c.stdin {
            Some(h) => Stream::Text(
                h.text.clone(),
                if h.literal {
                    Known::Known
                } else {
                    Known::Partly
                },
            ),
            None => std::mem::replace(&mut piped, Stream::Nothing),
        };
        let takes_stdout = c.redirects.iter().any(shell::Redirect::takes_stdout);
        let text = line.get(c.start..c.end).unwrap_or_default();
        let at = cx.out.len();
        let step = match program_index(&c.words) {
            // Taken in by the command before it (a filter after a probe).
            _ if skip > 0 => {
                skip -= 1;
                Step::done(true)
            }
            // Only assignments and redirections: `> file` empties it.
            None => Step {
                recognised: true,
                stdout: Stream::Text(Cow::Borrowed(""), Known::Known),
                consumes: 0,
            },
            Some(p) => {
                let call = Call {
                    name: basename(c.words[p].as_str()),
                    args: &c.words[p + 1..],
                    text,
                    line,
                    cmds: &cmds,
                    index,
                    stdin,
                    consumed: c.pipe || takes_stdout,
                };
                recognise(&call, depth, cx)
            }
        };
        let mut recognised = step.recognised;
        for r in &c.redirects {
            if r.writes() {
                let content = if r.takes_stdout() {
                    &step.stdout
                } else {
                    &Stream::Unknown
                };
                recognised &= write::to_path(r.target.as_str(), content, r.appends(), text, cx);
            } else if r.op == shell::Op::Read {
                write::connects(r.target.as_str(), text, cx);
            }
        }
        if !recognised {
            cx.opaque_at.get_or_insert(at);
        }
        skip += step.consumes;
        if c.pipe && !takes_stdout {
            piped = step.stdout;
        }
    }
}

fn recognise<'a>(call: &Call<'_, 'a>, depth: u8, cx: &mut Cx) -> Step<'a> {
    let Some(p) = program(call.name) else {
        return Step::done(false);
    };
    let r = match p {
        Program::Sysctl => kernel::sysctl(call, cx),
        Program::Modprobe => kernel::modprobe(call, cx),
        Program::Swapoff => kernel::swapoff(call, cx),
        Program::Sed => return sed::sed(call, cx),
        Program::Systemctl => service::systemctl(call, cx),
        Program::Service => service::service(call, cx),
        Program::Chkconfig => service::chkconfig(call, cx),
        Program::UpdateRcd => service::update_rc_d(call, cx),
        Program::Apt => package::apt(call, cx),
        Program::AptMark => package::apt_mark(call, cx),
        Program::Dnf => package::dnf(call, cx),
        Program::Zypper => package::zypper(call, cx),
        Program::Rpm => package::rpm(call, cx),
        Program::Dpkg => package::dpkg(call, cx),
        Program::Apk => package::apk(call, cx),
        Program::Pacman => package::pacman(call, cx),
        Program::Ufw => firewall::ufw(call, cx),
        Program::FirewallCmd => firewall::firewall_cmd(call, cx),
        Program::Iptables => firewall::iptables(call, cx),
        Program::Hostnamectl => hostnamectl(call, cx),
        Program::Hostname => hostname(call, cx),
        Program::Kubeadm => {
            cx.push(
                EffectKind::Kubeadm {
                    args: join(call.args),
                },
                Timing::NOW,
            );
            true
        }
        Program::Listening => return probe::listening(call, cx),
        Program::Fuser => probe::fuser(call, cx),
        Program::Nc => probe::nc(call, cx),
        Program::Curl => return probe::curl(call, cx),
        Program::Wget => return probe::wget(call, cx),
        Program::Tee => return write::tee(call, cx),
        Program::Echo => return write::echo(call),
        Program::Printf => return write::printf(call),
        Program::Cat => return write::cat(call),
        Program::Rm => files::rm(call, cx),
        Program::Ln => files::ln(call, cx),
        Program::Cp => files::cp(call, cx),
        Program::Mv => files::mv(call, cx),
        Program::Install => files::install(call, cx),
        Program::Shell => shell_script(call, depth, cx),
        Program::Su => su(call, depth, cx),
        Program::Grep => {
            // `grep -q` only decides what runs next.
            !call.consumed
                && call.args.iter().map(Word::as_str).any(|a| {
                    matches!(a, "--quiet" | "--silent")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('q'))
                })
        }
        Program::NoOp => true,
    };
    Step::done(r)
}

/// The programs recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Program {
    Sysctl,
    Modprobe,
    Swapoff,
    Sed,
    Systemctl,
    Service,
    Chkconfig,
    UpdateRcd,
    Apt,
    AptMark,
    Dnf,
    Zypper,
    Rpm,
    Dpkg,
    Apk,
    Pacman,
    Ufw,
    FirewallCmd,
    Iptables,
    Hostnamectl,
    Hostname,
    Kubeadm,
    /// `ss`, `netstat`, `lsof`: what listens where.
    Listening,
    Fuser,
    Nc,
    Curl,
    Wget,
    Tee,
    Echo,
    Printf,
    Cat,
    Rm,
    Ln,
    Cp,
    Mv,
    Install,
    /// `sh`, `bash`...: their `-c` script or standard input is read.
    Shell,
    Su,
    Grep,
    /// Builtins that change nothing on the node (`set -e`, `cd`, `true`,
    /// tests, `which`).
    NoOp,
}

impl Program {
    /// Whether naming it is enough for a line to be worth splitting: the
    /// others have effects only through a redirection, or a program
    /// named in their script, or none.
    fn screens(self) -> bool {
        !matches!(
            self,
            Program::Echo
                | Program::Printf
                | Program::Cat
                | Program::Shell
                | Program::Su
                | Program::Grep
                | Program::NoOp
        )
    }
}

fn program(name: &str) -> Option<Program> {
    use Program as P;
    Some(match name {
        "sysctl" => P::Sysctl,
        "modprobe" => P::Modprobe,
        "swapoff" => P::Swapoff,
        "sed" => P::Sed,
        "systemctl" => P::Systemctl,
        "service" => P::Service,
        "chkconfig" => P::Chkconfig,
        "update-rc.d" => P::UpdateRcd,
        "apt-get" | "apt" | "aptitude" => P::Apt,
        "apt-mark" => P::AptMark,
        "dnf" | "yum" | "microdnf" | "dnf5" | "tdnf" => P::Dnf,
        "zypper" => P::Zypper,
        "rpm" => P::Rpm,
        "dpkg" => P::Dpkg,
        "apk" => P::Apk,
        "pacman" => P::Pacman,
        "ufw" => P::Ufw,
        "firewall-cmd" | "firewall-offline-cmd" => P::FirewallCmd,
        "iptables" | "ip6tables" | "iptables-legacy" | "ip6tables-legacy" | "iptables-nft"
        | "ip6tables-nft" => P::Iptables,
        "hostnamectl" => P::Hostnamectl,
        "hostname" => P::Hostname,
        "kubeadm" => P::Kubeadm,
        "ss" | "netstat" | "lsof" => P::Listening,
        "fuser" => P::Fuser,
        "nc" | "ncat" | "netcat" => P::Nc,
        "curl" => P::Curl,
        "wget" => P::Wget,
        "tee" => P::Tee,
        "echo" => P::Echo,
        "printf" => P::Printf,
        "cat" => P::Cat,
        "rm" => P::Rm,
        "ln" => P::Ln,
        "cp" => P::Cp,
        "mv" => P::Mv,
        "install" => P::Install,
        "sh" | "bash" | "dash" | "ash" | "zsh" | "ksh" => P::Shell,
        "su" => P::Su,
        "grep" | "egrep" | "fgrep" => P::Grep,
        "set" | "true" | "false" | ":" | "cd" | "pushd" | "popd" | "export" | "unset" | "local"
        | "readonly" | "declare" | "exit" | "return" | "sleep" | "shopt" | "umask" | "test"
        | "[" | "[[" | "wait" | "for" | "case" | "select" | "function" | "command" | "which"
        | "type" => P::NoOp,
        _ => return None,
    })
}

/// The index of the program among `words`, after assignments and the
/// prefixes that only change how it runs; `None` when there is none.
fn program_index(words: &[Word<'_>]) -> Option<usize> {
    let mut i = 0;
    loop {
        while words.get(i).is_some_and(is_assignment) {
            i += 1;
        }
        let w = words.get(i)?;
        i += 1;
        match basename(w.as_str()) {
            "sudo" | "doas" => {
                i = skip_options(
                    words,
                    i,
                    &["-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U", "-D"],
                );
            }
            "env" => i = skip_options(words, i, &["-u", "-C", "-S"]),
            "nohup" | "exec" | "builtin" | "time" => {}
            "command" => {
                if words
                    .get(i)
                    .is_some_and(|w| matches!(w.as_str(), "-v" | "-V"))
                {
                    // `command -v x` asks where `x` is.
                    return Some(i - 1);
                }
                i = skip_options(words, i, &[]);
            }
            "timeout" => {
                // Its options, then the duration.
                i = skip_options(words, i, &["-s", "-k"]) + 1;
            }
            "nice" => i = skip_options(words, i, &["-n"]),
            "ionice" => i = skip_options(words, i, &["-c", "-n", "-p"]),
            "stdbuf" => i = skip_options(words, i, &["-i", "-o", "-e"]),
            _ => return Some(i - 1),
        }
    }
}

/// The index of the first word from `i` that is not an option (`--`
/// ends them); `with_arg` lists the options whose value is the next word.
fn skip_options(words: &[Word<'_>], mut i: usize, with_arg: &[&str]) -> usize {
    while let Some(w) = words.get(i) {
        let a = w.as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += if with_arg.contains(&a) { 2 } else { 1 };
    }
    i
}

/// `NAME=value`.
fn is_assignment(w: &Word<'_>) -> bool {
    let t = w.as_str();
    t.split_once('=').is_some_and(|(name, _)| {
        name.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    })
}

/// Whether a name holds a shell expansion (or Jinja that did not render):
/// its value on the node is not known, and an effect naming it would name
/// something else.
fn expands(name: &str) -> bool {
    name.contains(['$', '`']) || name.contains("{{") || name.contains("{%")
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The words' texts joined by one space.
fn join(words: &[Word<'_>]) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(w.as_str());
    }
    s
}

/// The words that are not options, given the options that take the next
/// word as their value (`--opt=value` takes none).
fn operands<'c, 'a>(args: &'c [Word<'a>], with_arg: &[&str]) -> Vec<&'c Word<'a>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options = true;
    while let Some(w) = args.get(i) {
        let a = w.as_str();
        i += 1;
        if options && a == "--" {
            options = false;
        } else if options && a.starts_with('-') && a.len() > 1 {
            if with_arg.contains(&a) {
                i += 1;
            }
        } else {
            out.push(w);
        }
    }
    out
}

/// `sh -c SCRIPT`, or `sh` reading its script from standard input (no
/// script file, or `-s`): the script's commands, read in turn. A script
/// file is not read.
fn shell_script(call: &Call<'_, '_>, depth: u8, cx: &mut Cx) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    let args = call.args;
    let mut i = 0;
    let (mut dash_c, mut dash_s) = (false, false);
    while let Some(a) = args.get(i).map(Word::as_str) {
        if matches!(a, "-o" | "+o" | "-O" | "+O") {
            i += 2;
        } else if a == "--" || a == "-" {
            i += 1;
            break;
        } else if a.starts_with("--") {
            i += 1;
        } else if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            dash_c |= a.starts_with('-') && a.contains('c');
            dash_s |= a.starts_with('-') && a.contains('s');
            // `-euo pipefail`: the option's name follows.
            i += if a.contains(['o', 'O']) { 2 } else { 1 };
        } else {
            break;
        }
    }
    if dash_c {
        return match args.get(i) {
            Some(script) => {
                walk(script.as_str(), Mode::Shell, depth + 1, cx);
                true
            }
            None => false,
        };
    }
    match (&call.stdin, dash_s || args.get(i).is_none()) {
        (Stream::Text(script, _), true) => {
            walk(script, Mode::Shell, depth + 1, cx);
            true
        }
        _ => false,
    }
}

/// `su [USER] -c COMMAND`: the command, read in turn.
fn su(call: &Call<'_, '_>, depth: u8, cx: &mut Cx) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    let mut it = call.args.iter();
    while let Some(w) = it.next() {
        let a = w.as_str();
        let script = match a {
            "-c" | "--command" | "--session-command" => it.next().map(Word::as_str),
            _ => a
                .strip_prefix("--command=")
                .or_else(|| a.strip_prefix("--session-command=")),
        };
        if let Some(script) = script {
            walk(script, Mode::Shell, depth + 1, cx);
            return true;
        }
    }
    false
}

/// `hostnamectl set-hostname NAME`: the static and the transient
/// hostname, unless one is chosen.
fn hostnamectl(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut timing = Timing::BOTH;
    for w in call.args {
        match w.as_str() {
            "--static" => timing = Timing::BOOT,
            "--transient" => timing = Timing::NOW,
            // Another machine's, or only the free-form name.
            "-H" | "--host" | "-M" | "--machine" | "--pretty" => return false,
            _ => {}
        }
    }
    let ops = operands(call.args, &["-H", "-M", "--host", "--machine"]);
    match ops.as_slice() {
        [verb, name]
            if matches!(verb.as_str(), "set-hostname" | "hostname") && !expands(name.as_str()) =>
        {
            cx.push(
                EffectKind::Hostname {
                    name: name.as_str().to_string(),
                },
                timing,
            );
            true
        }
        _ => false,
    }
}

/// `hostname NAME`: the running kernel's hostname only.
fn hostname(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut name = None;
    for w in call.args {
        match w.as_str() {
            "-b" | "--boot" => {}
            a if a.starts_with('-') => return false,
            a => name = Some(a),
        }
    }
    let Some(name) = name.filter(|n| !expands(n)) else {
        return false;
    };
    cx.push(
        EffectKind::Hostname {
            name: name.to_string(),
        },
        Timing::NOW,
    );
    true
}
