// empty-program: an empty Swift program, the floor for whole-process start-up timing.
