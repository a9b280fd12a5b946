"""Text as people's tools leave it: line ends and merge conflicts (`files`), and characters a
reader does not see as they are (`hidden`)."""
