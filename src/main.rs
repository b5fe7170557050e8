use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = preflint::cli::Cli::parse();
    match preflint::run::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("preflint: error: {e}");
            ExitCode::from(2)
        }
    }
}
