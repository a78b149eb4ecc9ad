/* A shared library that is not a Parallex plugin. */
int some_other_function(void) { return 42; }
