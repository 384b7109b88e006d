"""One module per sub-command; see ``ibistatic.cli``."""


def add_site_options(parser) -> None:
    """--config, --output and --jobs, as `build` and `watch` read them (config.load_command_config)."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the site configuration (default: ./ibistatic.yaml, else the bundled sample)",
    )
    parser.add_argument(
        "--output", metavar="DIR", help="where to publish (default: the configuration's output)"
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        type=_jobs,
        help="share the work among N processes (default: the configuration's jobs, else the "
        "CPUs this process may use); 1 builds in this process",
    )


def _jobs(text: str) -> int:
    import argparse

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of processes, 1 or more; found {text!r}"
        )
    return int(text)
