"""ibistatic: publish IBI persistent links as a static site and resolve them offline."""

__version__ = "0.1.0"
