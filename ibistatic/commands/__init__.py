"""One module per sub-command; see ``ibistatic.cli``."""


def add_site_options(parser) -> None:
    """--config and --output, as `build` and `watch` read them (config.load_command_config)."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the site configuration (default: ./ibistatic.yaml, else the bundled sample)",
    )
    parser.add_argument(
        "--output", metavar="DIR", help="where to publish (default: the configuration's output)"
    )
