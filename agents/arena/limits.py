"""The arena's limits that its command also shows (defaults of its options): a module of constants only, which
``hpuno-arena`` reads before it imports the engine."""

MAX_GAMES = 200  # live games (played and watched) at once
MAX_GAMES_PER_CLIENT = 100  # live games one client address holds at once (half the arena: nobody fills it alone)
IDLE_SECONDS = 30 * 60  # a game or replay untouched this long is dropped
MAX_RECORDS = 10_000  # the arena's own records in its folder (a game's record is 2-20 kB)
SEARCH_WORKERS_MOST = 4  # search processes the command starts by default at most (each loads the engine and torch)
