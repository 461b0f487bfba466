//! `rsnic-devd`: see the library's documentation and `--help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", rsnic_devd::devd::USAGE);
        return ExitCode::SUCCESS;
    }
    let cli = match rsnic_devd::devd::Cli::parse(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rsnic-devd: {e}\n{}", rsnic_devd::devd::USAGE);
            return ExitCode::from(2);
        }
    };
    match cli.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rsnic-devd: {e}");
            ExitCode::FAILURE
        }
    }
}
