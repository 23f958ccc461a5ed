"""Command-line options from a documented ``Args`` dataclass (CleanRL style), shared by the training scripts,
and the one syntax of rules options on every command line.

Each field's help text and default are its option's; ``--flag``/``--no-flag`` for booleans; a
``tuple[str, ...]`` field is a repeatable option (``--rule A --rule B``).

Rules options: every command (train.py, train_rllib.py, the tournament, agents.play) takes
``--rule NAME=VALUE``, repeatable (``parse_rules``); ``--rules JSON`` (an object of the same
options) is its alias, and the two may be mixed as long as no option is given twice.

>>> @dataclass
... class Args:
...     players: int = option(2, "seats per game (2..10)")
>>> args = Args(**vars(dataclass_parser(Args, __doc__).parse_args()))
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from hpuno_env import RulesOptions
from hpuno_env._reading import JSONInputError, parse_json

_TYPES = {"int": int, "float": float, "float | None": float, "str": str}


def option(default, help: str):
    """A dataclass field whose help text becomes the command-line option's."""
    return dataclasses.field(default=default, metadata={"help": help})


class _AppendToTuple(argparse.Action):
    """A repeatable option collected into a tuple (a dataclass default cannot be a mutable list)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, (*(getattr(namespace, self.dest, None) or ()), values))


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description (a script's docstring) as written, and every option's default after its help."""


@contextlib.contextmanager
def warnings_as_lines():
    """Within it, a warning (an agent trained under other rules than the games', say) is one ``warning: MESSAGE``
    line on stderr, not Python's file, line number and source line. Python's filters still decide which are shown."""
    previous = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"warning: {message}", file=sys.stderr, flush=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def one_torch_thread() -> None:
    """One torch thread, once the agents are loaded: their small batched networks only contend for a second thread on
    a 2-core machine (10x slower seen). Nothing to do when no agent loaded torch (rule-based players only), and torch
    is not loaded for it."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def exit_with_error(parser: argparse.ArgumentParser, problem: str) -> NoReturn:
    """A problem found after parsing, as ``error_lines`` prints it; exits with status 2."""
    parser.exit(2, error_lines(parser.prog, problem))


def error_lines(prog: str, problem: str) -> str:
    """``PROG: error: PROBLEM`` first, then one hint line, not the whole usage (which would bury the line that
    matters). The hint is the problem's second line if it has one (what to do instead), else where the options
    are explained."""
    message, _, hint = problem.partition("\n")
    return f"{prog}: error: {message}\n{hint or f'{prog} --help lists every option and its default'}\n"


def dataclass_parser(args_class, description: str | None, prog: str | None = None) -> argparse.ArgumentParser:
    """A parser with one option per field of ``args_class``; ``Args(**vars(parser.parse_args()))`` reads it."""
    parser = argparse.ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)
    for spec in dataclasses.fields(args_class):
        flag = "--" + spec.name.replace("_", "-")
        if spec.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=spec.default, help=spec.metadata["help"])
        elif spec.type == "tuple[str, ...]":
            parser.add_argument(flag, action=_AppendToTuple, default=spec.default, help=spec.metadata["help"], metavar="NAME=VALUE")
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
    return RulesOptions.from_kwargs(**_given_json_rules(text)).as_dict()


def _given_json_rules(text: str) -> dict:
    """The options a ``--rules`` JSON object gives, or ValueError."""
    try:
        given = parse_json(text, "--rules")
    except JSONInputError as error:  # too deep, huge numbers, not JSON at all: one line, never a RecursionError
        raise ValueError(f"not JSON ({error.problem}): {text[:80]!r}") from None
    if not isinstance(given, dict):
        raise ValueError(f"expected a JSON object like '{{\"uno_penalty\": 4}}', got {text[:80]!r}")
    return given


def parse_rule(text: str) -> tuple[str, object]:
    """``"name=value"`` -> (name, value), the value an int, a bool (true/false) or else a string.

    The name and value are checked where all rules options are: ``RulesOptions``."""
    name, separator, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not separator or not name or not raw:
        raise ValueError(f"a rules option must be NAME=VALUE (e.g. uno_penalty=4), got {text!r}")
    if raw.lower() in ("true", "false"):
        return name, raw.lower() == "true"
    try:
        return name, int(raw)
    except ValueError:
        return name, raw


def parse_rules(texts: Sequence[str], rules_json: str | None = None) -> dict:
    """Several ``NAME=VALUE`` texts (and, if given, the ``--rules`` JSON object, their alias) as a dict of the
    rules options given, checked by ``RulesOptions``; an option given twice is an error."""
    options = {}
    if rules_json is not None:
        options.update(_given_json_rules(rules_json))
    for text in texts:
        name, value = parse_rule(text)
        if name in options:
            raise ValueError(f"rules option {name!r} given twice")
        options[name] = value
    RulesOptions.from_kwargs(**options)
    return options


# Options that must not be typed on a command line: it is kept in the shell's history and in results files.
SECRET_OPTIONS = ("api_key",)


def parse_agent_options(texts: Sequence[str]) -> dict[str, dict]:
    """``--option AGENT:NAME=VALUE`` texts as {agent: {name: value}}: the value an int, a float, a bool
    (true/false) or else a string; ``AGENT`` is an agent as the command names it (``llm``, ``llm#2`` for the
    second ``llm``). The options themselves are checked by the agent that takes them. An option given twice,
    or a secret (``SECRET_OPTIONS``: an API key comes from its environment variable), is refused."""
    options: dict[str, dict] = {}
    for text in texts:
        agent, separator, rest = text.partition(":")
        if not separator or not agent.strip() or "=" not in rest:
            raise ValueError(f"an agent option must be AGENT:NAME=VALUE (e.g. llm:model=qwen3), got {text[:80]!r}")
        name, value = parse_rule(rest)
        if name in SECRET_OPTIONS:
            raise ValueError(f"--option {agent}:{name} would keep a secret in the shell's history and the results: "
                             "give it in the environment (OPENAI_API_KEY for the llm player)")
        if isinstance(value, str):
            try:
                value = float(value) if math.isfinite(float(value)) else value
            except ValueError:
                pass
        given = options.setdefault(agent.strip(), {})
        if name in given:
            raise ValueError(f"agent option {agent}:{name} given twice")
        given[name] = value
    return options


def rules_problem(texts: Sequence[str], rules_json: str) -> str | None:
    """What is wrong with ``--rule`` / ``--rules``, prefixed with the option(s) at fault, or None."""
    try:
        rules_from_options(texts, rules_json)
    except (ValueError, TypeError) as error:
        flag = "--rules" if not texts else "--rule" if rules_json.strip() == "{}" else "--rule/--rules"
        return f"{flag}: {error}"
    return None


def rules_from_options(texts: Sequence[str], rules_json: str) -> dict:
    """``--rule NAME=VALUE`` options and the ``--rules`` JSON as a full, checked ``RulesOptions`` dict."""
    return RulesOptions.from_kwargs(**parse_rules(texts, rules_json)).as_dict()
