//! The driver's command line, parsed by hand: a handful of flags, each with a default.

use std::path::PathBuf;
use std::time::Duration;

/// What `--help` and a wrong argument print.
pub const USAGE: &str = "\
usage: load <command> [options]

  load      [--seconds 60] [--clients 1,8,64] [--tools echo,files.read]
  soak      [--minutes 10] [--rate 100] [--samples FILE]
  balanced  [--seconds 60] [--clients 8] [--haproxy haproxy]

every command: [--reach PATH] (default: target/release/reach) [--json] [--keep]
  --keep: leave the temporary folder (logs, audit folders, HAProxy's configuration) in place";

/// A subcommand with its options.
#[derive(Debug)]
pub enum Command {
    /// Closed-loop load at several client counts.
    Load(LoadArgs),
    /// A steady rate for minutes, sampling the server.
    Soak(SoakArgs),
    /// Two instances behind HAProxy, one killed.
    Balanced(BalancedArgs),
    /// `--help`.
    Help,
}

/// Options every subcommand has.
#[derive(Debug)]
pub struct Common {
    /// The `reach` binary to start.
    pub reach: PathBuf,
    /// The report as one JSON object instead of tables.
    pub json: bool,
    /// Leave the temporary folder in place, to read the servers' logs and audit folders.
    pub keep: bool,
}

/// `load`'s options.
#[derive(Debug)]
pub struct LoadArgs {
    /// Options every subcommand has.
    pub common: Common,
    /// How long each tool and client count runs.
    pub duration: Duration,
    /// The client counts, in order.
    pub clients: Vec<usize>,
    /// The tools, by label (`echo`, `files.read`).
    pub tools: Vec<String>,
}

/// `soak`'s options.
#[derive(Debug)]
pub struct SoakArgs {
    /// Options every subcommand has.
    pub common: Common,
    /// How long it runs.
    pub duration: Duration,
    /// Calls a second, over all clients.
    pub rate: f64,
    /// Where the samples are written as tab-separated lines; printed with the report if unset.
    pub samples: Option<PathBuf>,
}

/// `balanced`'s options.
#[derive(Debug)]
pub struct BalancedArgs {
    /// Options every subcommand has.
    pub common: Common,
    /// How long the load runs; the kill is at half of it.
    pub duration: Duration,
    /// Clients through the balancer (half with sessions, half stateless).
    pub clients: usize,
    /// The `haproxy` program.
    pub haproxy: PathBuf,
}

impl Command {
    /// The command `args` (without the program's name) ask for.
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
        let name = args.next().unwrap_or_else(|| "help".to_owned());
        let mut flags = Flags::parse(args)?;
        let command = match name.as_str() {
            "load" => Command::Load(LoadArgs {
                duration: Duration::from_secs_f64(flags.number("seconds", 60.0)?),
                clients: flags.list("clients", "1,8,64", |s| s.parse::<usize>().ok())?,
                tools: flags.list("tools", "echo,files.read", |s| Some(s.to_owned()))?,
                common: flags.common()?,
            }),
            "soak" => Command::Soak(SoakArgs {
                duration: Duration::from_secs_f64(flags.number("minutes", 10.0)? * 60.0),
                rate: flags.number("rate", 100.0)?,
                samples: flags.take("samples").map(PathBuf::from),
                common: flags.common()?,
            }),
            "balanced" => Command::Balanced(BalancedArgs {
                duration: Duration::from_secs_f64(flags.number("seconds", 60.0)?),
                clients: flags.number("clients", 8.0)? as usize,
                haproxy: PathBuf::from(flags.take("haproxy").unwrap_or_else(|| "haproxy".into())),
                common: flags.common()?,
            }),
            "help" | "--help" | "-h" => Command::Help,
            other => return Err(format!("unknown command `{other}`")),
        };
        flags.done()?;
        Ok(command)
    }
}

/// `--name value` pairs and bare `--name` switches, taken one by one.
struct Flags {
    given: Vec<(String, Option<String>)>,
}

impl Flags {
    fn parse(args: impl Iterator<Item = String>) -> Result<Flags, String> {
        let mut given = Vec::new();
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            let Some(name) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument `{arg}`"));
            };
            let value = match name {
                "json" | "keep" => None,
                _ => Some(args.next().ok_or_else(|| format!("--{name} needs a value"))?),
            };
            given.push((name.to_owned(), value));
        }
        Ok(Flags { given })
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let at = self.given.iter().position(|(n, _)| n == name)?;
        self.given.remove(at).1
    }

    fn switch(&mut self, name: &str) -> bool {
        let at = self.given.iter().position(|(n, _)| n == name);
        at.map(|at| self.given.remove(at)).is_some()
    }

    fn number(&mut self, name: &str, default: f64) -> Result<f64, String> {
        match self.take(name) {
            None => Ok(default),
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|n| *n > 0.0)
                .ok_or_else(|| format!("--{name} {text}: a positive number is expected")),
        }
    }

    fn list<T>(
        &mut self,
        name: &str,
        default: &str,
        item: impl Fn(&str) -> Option<T>,
    ) -> Result<Vec<T>, String> {
        let text = self.take(name).unwrap_or_else(|| default.to_owned());
        text.split(',')
            .map(|part| item(part.trim()).ok_or_else(|| format!("--{name}: `{part}` in {text}")))
            .collect()
    }

    fn common(&mut self) -> Result<Common, String> {
        let reach = match self.take("reach") {
            Some(path) => PathBuf::from(path),
            None => beside_examples("reach")?,
        };
        Ok(Common { reach, json: self.switch("json"), keep: self.switch("keep") })
    }

    fn done(self) -> Result<(), String> {
        match self.given.first() {
            Some((name, _)) => Err(format!("unknown option --{name}")),
            None => Ok(()),
        }
    }
}

/// `program` in the folder above this example's (`target/release/examples/load` →
/// `target/release/program`), so the default follows `CARGO_TARGET_DIR` and the profile.
fn beside_examples(program: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("where is this program? {e}"))?;
    exe.parent()
        .and_then(|examples| examples.parent())
        .map(|profile| profile.join(program))
        .ok_or_else(|| format!("{} has no folder above its own: pass --reach", exe.display()))
}
