# Fails the test with the message given in the environment.
message(FATAL_ERROR "$ENV{MESSAGE}")
