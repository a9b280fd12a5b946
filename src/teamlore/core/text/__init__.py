"""Text as people's tools leave it: line ends and merge conflicts (`files`), characters a
reader does not see as they are (`hidden`), Markdown a rendered view shows otherwise than it
is written (`markup`), and short excerpts of it cut between words and marked (`excerpts`)."""
