"""`python -m teamlore`: the `teamlore` command, where the environment's scripts folder is not on
PATH (a virtual environment that is not activated, `pipx run`, a container)."""

from teamlore.cli.entry import main

if __name__ == "__main__":
    main()
