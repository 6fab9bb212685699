"""`python -m x2` and the `x2` command. A conversion's frontend worker is
started before the command line module is imported: it imports its framework
(seconds) while this process imports the pipeline (x2/process/isolation.py
start_warm; the conversion's steps of that framework share it)."""
import sys


def _source(argv: list[str]) -> str | None:
    """`--from X` of an `x2 convert` command line, read before click parses it."""
    if not argv or argv[0] != "convert" or "--help" in argv:
        return None
    for flag, value in zip(argv, argv[1:] + [""]):
        if flag == "--from":
            return value
        if flag.startswith("--from="):
            return flag.partition("=")[2]
    return None


def main() -> None:
    source = _source(sys.argv[1:])
    if source in ("tf", "torch", "onnx"):
        from .process.isolation import start_warm
        start_warm(f"{source}.read")
    from .cli import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
