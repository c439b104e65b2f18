"""Where results go besides stdout: GitHub workflow commands and files, Argo output files, GitLab."""
