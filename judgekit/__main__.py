"""``python -m judgekit`` is the same as the ``judgekit`` command."""

from judgekit.cli.main import main

main()
