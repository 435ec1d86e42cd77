//! `privmix`: the native command line (feature `cli`, on by default). The subcommands live in
//! `src/cli/`, one file each, over the application layer [`privmix::api`].

mod cli;

fn main() {
    cli::main()
}
