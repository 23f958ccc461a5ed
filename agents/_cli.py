"""Command-line options from a documented ``Args`` dataclass (CleanRL style), shared by the training scripts.

Each field's help text and default are its option's; ``--flag``/``--no-flag`` for booleans.

>>> @dataclass
... class Args:
...     players: int = option(2, "seats per game (2..10)")
>>> args = Args(**vars(dataclass_parser(Args, __doc__).parse_args()))
"""

from __future__ import annotations

import argparse
import dataclasses

from hpuno_env import RulesOptions
from hpuno_env._reading import JSONInputError, parse_json

_TYPES = {"int": int, "float": float, "float | None": float, "str": str}


def option(default, help: str):
    """A dataclass field whose help text becomes the command-line option's."""
    return dataclasses.field(default=default, metadata={"help": help})


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description (a script's docstring) as written, and every option's default after its help."""


def dataclass_parser(args_class, description: str | None) -> argparse.ArgumentParser:
    """A parser with one option per field of ``args_class``; ``Args(**vars(parser.parse_args()))`` reads it."""
    parser = argparse.ArgumentParser(description=description, formatter_class=HelpFormatter)
    for spec in dataclasses.fields(args_class):
        flag = "--" + spec.name.replace("_", "-")
        if spec.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=spec.default, help=spec.metadata["help"])
        else:
            parser.add_argument(flag, type=_TYPES[spec.type], default=spec.default, help=spec.metadata["help"], metavar=spec.name.upper())
    return parser


def given_options(args_class, argv) -> set[str]:
    """The fields of ``args_class`` that ``argv`` sets (as opposed to those left at their defaults)."""
    parser = dataclass_parser(args_class, None)
    for action in parser._actions:  # no defaults: only what argv sets ends up in the namespace
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


def inherit_options(args, earlier: dict, given: set[str], fixed: tuple[str, ...], own: set[str], out: str) -> str | None:
    """``--resume``: set every field of ``args`` not ``given`` on the command line (nor in ``own``: this command's
    business, e.g. ``--out``) to the run's ``earlier`` value, so a resumed run trains as before unless told otherwise.
    Returns the problem if a ``fixed`` option (what the checkpoint's networks fix) is given with another value."""
    for name in fixed:
        if name in given and name in earlier and not _same_option(getattr(args, name), earlier[name]):
            return (f"{_as_flag(name, getattr(args, name))}: the checkpoint in {out} was trained with "
                    f"{_as_flag(name, earlier[name])}, which a resumed run keeps (start a new run in another folder to change it)")
    for name in {field.name for field in dataclasses.fields(args)} - given - own:
        if name in earlier:
            setattr(args, name, earlier[name])
    return None


def _as_flag(name: str, value) -> str:
    """An option as typed: ``--scale-observations`` / ``--no-scale-observations`` for booleans, ``--players 4``."""
    flag = name.replace("_", "-")
    if isinstance(value, bool):
        return f"--{flag}" if value else f"--no-{flag}"
    return f"--{flag} {value}"


def _same_option(value, earlier) -> bool:
    """Equal values, layer sizes compared as sizes ("256, 256" is "256,256")."""
    if isinstance(value, str) and isinstance(earlier, str):
        try:
            return layer_sizes(value) == layer_sizes(earlier)
        except ValueError:
            pass
    return value == earlier


def layer_sizes(text: str) -> list[int]:
    """Hidden layer sizes from ``"256,256"``; ValueError says what is wrong."""
    if not all(part.strip().isdigit() and int(part) > 0 for part in text.split(",")):
        raise ValueError(f"must be positive layer sizes separated by commas, e.g. 256,256, got {text!r}")
    return [int(part) for part in text.split(",")]


def rules_from_json(text: str) -> dict:
    """A ``--rules`` JSON object as a full, checked ``RulesOptions`` dict; ValueError/TypeError say what is wrong."""
    try:
        given = parse_json(text, "--rules")
    except JSONInputError as error:  # too deep, huge numbers, not JSON at all: one line, never a RecursionError
        raise ValueError(f"not JSON ({error.problem}): {text[:80]!r}") from None
    if not isinstance(given, dict):
        raise ValueError(f"expected a JSON object like '{{\"uno_penalty\": 4}}', got {text!r}")
    return RulesOptions.from_kwargs(**given).as_dict()
