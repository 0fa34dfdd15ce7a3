"""`python -m callpin`: the command line."""

from .cli import main

main()
