//! `reach`: the Agent Reach command line.
//!
//! Exit codes: 0 success; 1 a tool call failed (JSON error on stdout) or,
//! for `run`, the model failed; 2 usage or configuration error (message on
//! stderr); 3 `run` stopped by a limit or a person declining. `eval`: 0
//! every gate holds, 1 a gate failed, 2 usage or a case-file error.
//! `memory`: 1 no such entry, 3 a person declined to forget.

mod agents;
mod args;
mod call;
mod check;
mod context;
mod distribute;
mod eval;
mod mcp;
mod memory;
mod model_setup;
mod new_skill;
mod run;
mod runs;
mod skill_requests;
mod skills;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    context::init_logging(&cli);
    let runtime =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
            Ok(rt) => rt,
            Err(err) => {
                eprintln!("error: could not start the async runtime: {err}");
                return ExitCode::from(2);
            }
        };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: args::Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        args::Command::Skills { command: args::SkillsCommand::List { json } } => {
            skills::list(&cli, *json).await
        }
        args::Command::Skills { command: args::SkillsCommand::Inspect { name, json } } => {
            skills::inspect(&cli, name, *json).await
        }
        args::Command::Skills { command: args::SkillsCommand::Pin { name } } => {
            skills::pin(&cli, name).await
        }
        args::Command::Call(call) => call::run(&cli, call).await,
        args::Command::Policy { command: args::PolicyCommand::Check { json } } => {
            check::run(&cli, *json).await
        }
        args::Command::Policy { command: args::PolicyCommand::Suggest { name } } => {
            skills::requests::suggest(&cli, name).await
        }
        args::Command::Agents { command: args::AgentsCommand::List { json } } => {
            agents::list(&cli, *json).await
        }
        args::Command::Skill { command: args::SkillCommand::New { name, dir, lang, sdk_path } } => {
            new_skill::run(new_skill::NewSkill {
                name,
                parent: dir.as_deref(),
                lang: *lang,
                sdk_path: sdk_path.as_deref(),
            })
        }
        args::Command::Skill { command: args::SkillCommand::Requests { wasm, set, json } } => {
            skill_requests::run(wasm, set.as_deref(), *json)
        }
        args::Command::Skill {
            command: args::SkillCommand::Add { reference, require_signature, key, json },
        } => {
            let args = distribute::add::AddArgs {
                reference,
                require_signature: *require_signature,
                key: key.as_deref(),
                json: *json,
            };
            distribute::add(&cli, &args).await
        }
        args::Command::Skill {
            command: args::SkillCommand::Publish { wasm, reference, sign, json },
        } => distribute::publish(&cli, wasm, reference, sign.as_deref(), *json).await,
        args::Command::Skill { command: args::SkillCommand::Sign { reference, key, json } } => {
            distribute::sign(reference, key, *json).await
        }
        args::Command::Skill { command: args::SkillCommand::Keygen { out, json } } => {
            distribute::keygen(out, *json)
        }
        args::Command::Skill { command: args::SkillCommand::Update { name, yes, json } } => {
            distribute::update(&cli, name.as_deref(), *yes, *json).await
        }
        args::Command::Run(args) => run::run(&cli, args).await,
        args::Command::Eval(args) => eval::run(&cli, args).await,
        args::Command::Runs { command: args::RunsCommand::List { runs_dir, json } } => {
            runs::list(runs_dir, *json)
        }
        args::Command::Runs { command: args::RunsCommand::Show { run, runs_dir, json } } => {
            runs::show(runs_dir, run, *json)
        }
        args::Command::Runs {
            command: args::RunsCommand::Verify { run, all: _, key, runs_dir, json },
        } => runs::verify::run(runs_dir, run.as_deref(), key.as_deref(), *json),
        args::Command::Runs {
            command: args::RunsCommand::Diff { run, from_step, runs_dir, json },
        } => runs::undo::diff(runs_dir, run, *from_step, *json),
        args::Command::Runs {
            command: args::RunsCommand::Undo { run, from_step, force, runs_dir, json },
        } => runs::undo::undo(runs_dir, run, *from_step, *force, *json),
        args::Command::Runs {
            command: args::RunsCommand::Prune { older_than, max_mb, dry_run, runs_dir, json },
        } => runs::undo::prune(runs_dir, *older_than, *max_mb, *dry_run, *json),
        args::Command::Runs {
            command: args::RunsCommand::Replay { run, live, runs_dir, json },
        } => runs::replay::run(&cli, runs_dir, run, *live, *json).await,
        args::Command::Runs { command: args::RunsCommand::Pubkey { runs_dir } } => {
            runs::verify::pubkey(runs_dir)
        }
        args::Command::Memory(args) => memory::run(&cli, args),
        args::Command::Mcp(args) => mcp::run(&cli, args).await,
    }
}
