# Start from a built-in and change one thing.
base = roadmap-2013
name = roadmap-2013-16m
cache = 16MiB
