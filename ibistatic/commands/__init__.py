"""One module per sub-command; see ``ibistatic.cli``."""
