# ruff: noqa: E501  (a data table: one tool or parameter per line reads better than wrapped strings)
"""The six simulated MCP servers: tool names, descriptions, parameters and how users ask.

Hand-written to resemble real servers (GitHub, a filesystem, a SQL database, Slack, web
search/fetch, Jira). `catalog.py` sizes each tool to the paper's token profile by choosing
optional parameters and usage notes from these lists with a seeded generator.

A tool is `(name, description, required, optional, request)`: `required`/`optional` are keys of
the server's `params`; `request` is how a user asks for it, with `{slots}` filled from `VALUES`.
Each server also lists `generic` parameters (pagination, formats, timeouts, ids: the
boilerplate real servers carry on every tool) and `notes`; only these pad a tool to its size, so
no tool gains parameters that belong to another tool.
"""

from __future__ import annotations

from typing import Any

Param = tuple[str, str, dict[str, Any]]
"""(JSON type, description, extra schema keys)."""

ToolDef = tuple[str, str, tuple[str, ...], tuple[str, ...], str]
"""(name, description, required params, optional params, user request template)."""


def _p(kind: str, text: str, **extra: Any) -> Param:
    return (kind, text, extra)


PAGE = {
    "per_page": _p(
        "integer",
        "Results per page (1-100). Smaller pages answer faster; use page to walk through the rest.",
        minimum=1,
        maximum=100,
        default=30,
    ),
    "page": _p(
        "integer", "Page number of the results to fetch, starting at 1.", minimum=1, default=1
    ),
}

COMMON = {
    "response_format": _p(
        "string",
        "How much detail to return: 'concise' keeps the fields most answers need, 'detailed' returns everything the service sends.",
        enum=["concise", "detailed"],
        default="concise",
    ),
    "timeout_s": _p(
        "number",
        "Seconds to wait for the service before giving up with a timeout error; raise it for slow, large requests.",
        default=30,
    ),
    "include_raw": _p(
        "boolean",
        "Also return the raw service response next to the summary. Larger; use it only when a field you need is missing from the summary.",
        default=False,
    ),
    "request_id": _p(
        "string",
        "Optional id you choose to correlate this call with logs and retries; echoed back in the result and in error messages.",
    ),
}

SERVERS: dict[str, dict[str, Any]] = {}

# -- GitHub ----------------------------------------------------------------------------------
SERVERS["github"] = {
    "profile": (30, 520),
    "params": {
        "owner": _p(
            "string",
            "Account that owns the repository: a user login or an organization name, e.g. 'octo-org'. Case-insensitive.",
        ),
        "repo": _p(
            "string",
            "Repository name without the owner and without the .git suffix, e.g. 'payments-api'.",
        ),
        "issue_number": _p(
            "integer", "Number of the issue as shown in its URL and title (not the internal id)."
        ),
        "pull_number": _p(
            "integer",
            "Number of the pull request as shown in its URL (pull requests share the issue number sequence).",
        ),
        "title": _p(
            "string",
            "Title. Keep it short and specific; it is shown in lists, notifications and search results.",
        ),
        "body": _p(
            "string",
            "Body text in GitHub-flavoured Markdown. Mentions (@user), issue references (#123) and task lists are rendered.",
        ),
        "labels": _p(
            "array",
            "Label names to apply. Labels that do not exist in the repository are rejected rather than created.",
            items={"type": "string"},
        ),
        "assignees": _p(
            "array",
            "Logins of users to assign (at most 10). Users without push access to the repository are ignored silently.",
            items={"type": "string"},
        ),
        "milestone": _p(
            "integer", "Number of the milestone to associate with, or null to remove the milestone."
        ),
        "state": _p(
            "string",
            "Filter or set the state. 'all' is only valid when filtering.",
            enum=["open", "closed", "all"],
        ),
        "state_reason": _p(
            "string",
            "Why the issue was closed; shown in the timeline.",
            enum=["completed", "not_planned", "reopened"],
        ),
        "sort": _p("string", "Field to sort results by.", enum=["created", "updated", "comments"]),
        "direction": _p(
            "string", "Sort direction; defaults to 'desc' for dates.", enum=["asc", "desc"]
        ),
        "since": _p(
            "string",
            "Only results updated at or after this time, as an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SSZ).",
        ),
        "head": _p(
            "string",
            "Branch holding the changes. For a branch in a fork, prefix it with the fork owner: 'user:branch'.",
        ),
        "base": _p(
            "string",
            "Branch the changes should be merged into, usually the default branch such as 'main'.",
        ),
        "draft": _p(
            "boolean",
            "Open the pull request as a draft: it cannot be merged until marked ready for review.",
            default=False,
        ),
        "maintainer_can_modify": _p(
            "boolean",
            "Let maintainers of the base repository push to the head branch.",
            default=True,
        ),
        "merge_method": _p(
            "string",
            "How to merge: a merge commit, a squash into one commit, or a rebase of the commits.",
            enum=["merge", "squash", "rebase"],
        ),
        "commit_title": _p(
            "string", "Title of the merge commit; defaults to the pull request title."
        ),
        "commit_message": _p("string", "Extra detail appended to the merge commit message."),
        "path": _p(
            "string",
            "Path of the file or directory relative to the repository root, using forward slashes, e.g. 'src/app/main.py'.",
        ),
        "ref": _p(
            "string",
            "Branch, tag or commit SHA to read from. Defaults to the repository's default branch.",
        ),
        "branch": _p(
            "string", "Branch to write to. It must exist; create it first with the branch tool."
        ),
        "content": _p(
            "string", "New file content as plain UTF-8 text; it replaces the whole file."
        ),
        "message": _p(
            "string",
            "Commit message describing the change; the first line is the summary shown in history.",
        ),
        "sha": _p(
            "string",
            "Blob SHA of the file being replaced, required when updating an existing file to avoid overwriting concurrent edits.",
        ),
        "query": _p(
            "string",
            "Search query using GitHub search syntax, e.g. 'is:open label:bug author:alice'. Qualifiers narrow the results.",
        ),
        "event": _p(
            "string",
            "Review action to take with the review.",
            enum=["APPROVE", "REQUEST_CHANGES", "COMMENT"],
        ),
        "commit_id": _p(
            "string",
            "SHA of the commit the review or comment applies to; defaults to the latest commit of the pull request.",
        ),
        "from_branch": _p(
            "string",
            "Existing branch or commit SHA to start the new branch from; defaults to the default branch.",
        ),
        "author": _p("string", "Only commits by this author: a GitHub login or an email address."),
        "private": _p(
            "boolean",
            "Create the repository as private (visible only to people with access).",
            default=False,
        ),
        "description": _p(
            "string", "Short description shown on the repository page and in search results."
        ),
        "auto_init": _p(
            "boolean",
            "Create an initial commit with an empty README so the repository can be cloned right away.",
            default=False,
        ),
        "organization": _p(
            "string", "Organization to fork into; defaults to the authenticated user's account."
        ),
        "workflow_id": _p("string", "Workflow file name (e.g. 'ci.yml') or numeric id."),
        "run_id": _p("integer", "Id of the workflow run, as shown in the Actions tab URL."),
        "status": _p(
            "string",
            "Only runs with this status or conclusion.",
            enum=["queued", "in_progress", "completed", "success", "failure", "cancelled"],
        ),
        "files": _p(
            "array",
            "Files to commit together, each with a path and its new content.",
            items={
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        ),
        **PAGE,
        **COMMON,
        "accept": _p(
            "string",
            "Media type of file contents and bodies: 'json' (default), 'raw' for the file as is, 'html' for rendered Markdown.",
            enum=["json", "raw", "html"],
            default="json",
        ),
        "api_version": _p(
            "string",
            "GitHub REST API version to call, as a date, e.g. '2022-11-28'. Leave unset to use the server's pinned version.",
        ),
    },
    "generic": [
        "per_page",
        "page",
        "accept",
        "api_version",
        "response_format",
        "timeout_s",
        "include_raw",
        "request_id",
    ],
    "notes": [
        "Requires a token with the repo scope for private repositories; public repositories can be read anonymously within rate limits.",
        "Responses are paginated; the result includes the total count when GitHub provides it.",
        "Rate limits apply: 5,000 requests per hour for authenticated calls, fewer for search endpoints.",
        "Returns the created or updated object with its URL, number and timestamps so it can be linked in replies.",
        "Errors from GitHub are returned with their HTTP status and message; a 404 usually means a typo or missing access rather than a missing object.",
        "Usernames and repository names are matched case-insensitively; renamed repositories redirect to their new name.",
        "Works with GitHub.com and GitHub Enterprise Server 3.9 or later; the host is taken from the server configuration.",
        "Fine-grained personal access tokens need the matching repository permission (issues, pull requests, contents or actions).",
        "Secondary rate limits may apply to bursts of write requests; the server waits and retries once before reporting the error.",
    ],
    "tools": [
        (
            "github_create_issue",
            "Create a new issue in a GitHub repository.",
            ("owner", "repo", "title"),
            ("body", "labels", "assignees", "milestone"),
            "Open a GitHub issue in {repo} titled '{title}'",
        ),
        (
            "github_get_issue",
            "Get the details of one issue: title, body, state, labels, assignees and timestamps.",
            ("owner", "repo", "issue_number"),
            (),
            "Show me GitHub issue #{number} in {repo}",
        ),
        (
            "github_list_issues",
            "List issues of a repository with filters for state, labels and sort order.",
            ("owner", "repo"),
            ("state", "labels", "sort", "direction", "since"),
            "Which issues are still open in {repo}?",
        ),
        (
            "github_update_issue",
            "Update an existing issue: title, body, state, labels, assignees or milestone.",
            ("owner", "repo", "issue_number"),
            ("title", "body", "state", "state_reason", "labels", "assignees"),
            "Close issue #{number} in {repo} as completed",
        ),
        (
            "github_add_issue_comment",
            "Add a comment to an issue or pull request.",
            ("owner", "repo", "issue_number", "body"),
            (),
            "Comment on issue #{number} in {repo} that {note}",
        ),
        (
            "github_search_issues",
            "Search issues and pull requests across repositories with GitHub search syntax.",
            ("query",),
            ("sort", "direction"),
            "Find GitHub issues mentioning '{term}' across our repos",
        ),
        (
            "github_create_pull_request",
            "Open a pull request that merges a head branch into a base branch.",
            ("owner", "repo", "title", "head", "base"),
            ("body", "draft", "maintainer_can_modify"),
            "Open a pull request from {branch} into main in {repo}",
        ),
        (
            "github_get_pull_request",
            "Get a pull request: title, description, branches, mergeability and review state.",
            ("owner", "repo", "pull_number"),
            (),
            "What's the status of PR #{number} in {repo}?",
        ),
        (
            "github_list_pull_requests",
            "List pull requests of a repository, filtered by state and branches.",
            ("owner", "repo"),
            ("state", "head", "base", "sort", "direction"),
            "List the open pull requests in {repo}",
        ),
        (
            "github_merge_pull_request",
            "Merge a pull request with a merge commit, a squash or a rebase.",
            ("owner", "repo", "pull_number"),
            ("merge_method", "commit_title", "commit_message"),
            "Squash-merge PR #{number} in {repo}",
        ),
        (
            "github_get_pull_request_files",
            "List the files a pull request changes, with additions, deletions and patches.",
            ("owner", "repo", "pull_number"),
            (),
            "Which files does PR #{number} in {repo} touch?",
        ),
        (
            "github_get_pull_request_status",
            "Get the combined status of the checks on a pull request's head commit.",
            ("owner", "repo", "pull_number"),
            (),
            "Are the CI checks passing on PR #{number} in {repo}?",
        ),
        (
            "github_update_pull_request_branch",
            "Bring a pull request branch up to date with its base branch.",
            ("owner", "repo", "pull_number"),
            ("commit_id",),
            "Update the branch of PR #{number} in {repo} with the latest main",
        ),
        (
            "github_get_pull_request_comments",
            "Get the review comments left on the lines of a pull request.",
            ("owner", "repo", "pull_number"),
            (),
            "Show the review comments on PR #{number} in {repo}",
        ),
        (
            "github_get_pull_request_reviews",
            "Get the reviews of a pull request and their verdicts.",
            ("owner", "repo", "pull_number"),
            (),
            "Who approved PR #{number} in {repo}?",
        ),
        (
            "github_create_pull_request_review",
            "Submit a review on a pull request: approve, request changes or comment.",
            ("owner", "repo", "pull_number", "event"),
            ("body", "commit_id"),
            "Approve PR #{number} in {repo}",
        ),
        (
            "github_create_repository",
            "Create a new repository for the authenticated user.",
            ("repo",),
            ("description", "private", "auto_init"),
            "Create a new private repo called {repo}",
        ),
        (
            "github_get_file_contents",
            "Get the contents of a file or a directory listing from a repository.",
            ("owner", "repo", "path"),
            ("ref",),
            "Show me {path} from {repo}",
        ),
        (
            "github_create_or_update_file",
            "Create or replace one file in a repository with a commit.",
            ("owner", "repo", "path", "content", "message", "branch"),
            ("sha",),
            "Commit an updated {path} to {branch} in {repo}",
        ),
        (
            "github_push_files",
            "Commit several files to a branch in a single commit.",
            ("owner", "repo", "branch", "files", "message"),
            (),
            "Push these config files to {branch} in {repo} in one commit",
        ),
        (
            "github_search_repositories",
            "Search GitHub repositories by name, topic, language or owner.",
            ("query",),
            ("sort", "direction"),
            "Find GitHub repositories about {term}",
        ),
        (
            "github_fork_repository",
            "Fork a repository to your account or an organization.",
            ("owner", "repo"),
            ("organization",),
            "Fork {repo} into our organization",
        ),
        (
            "github_create_branch",
            "Create a new branch in a repository from an existing branch or commit.",
            ("owner", "repo", "branch"),
            ("from_branch",),
            "Create a branch {branch} in {repo}",
        ),
        (
            "github_list_commits",
            "List the commits of a branch, optionally by author or path.",
            ("owner", "repo"),
            ("ref", "author", "path", "since"),
            "What was committed to {repo} this week?",
        ),
        (
            "github_get_commit",
            "Get one commit with its message, author, changed files and diff stats.",
            ("owner", "repo", "sha"),
            (),
            "Show me commit {sha} in {repo}",
        ),
        (
            "github_search_code",
            "Search code across repositories with GitHub code search syntax.",
            ("query",),
            (),
            "Where in our code do we call {term}?",
        ),
        (
            "github_search_users",
            "Search GitHub users by login, name, location or followers.",
            ("query",),
            ("sort",),
            "Find the GitHub user {person}",
        ),
        (
            "github_list_branches",
            "List the branches of a repository and whether they are protected.",
            ("owner", "repo"),
            (),
            "List the branches of {repo}",
        ),
        (
            "github_list_workflow_runs",
            "List the GitHub Actions workflow runs of a repository.",
            ("owner", "repo"),
            ("workflow_id", "branch", "status"),
            "Show the recent CI runs of {repo}",
        ),
        (
            "github_rerun_workflow",
            "Re-run a GitHub Actions workflow run, all jobs or only the failed ones.",
            ("owner", "repo", "run_id"),
            (),
            "Re-run the failed CI run {run} in {repo}",
        ),
    ],
}

# -- filesystem -------------------------------------------------------------------------------
SERVERS["filesystem"] = {
    "profile": (10, 180),
    "params": {
        "path": _p("string", "Path inside the allowed directories."),
        "paths": _p("array", "Paths of the files to read.", items={"type": "string"}),
        "content": _p("string", "Text to write."),
        "edits": _p(
            "array",
            "Replacements to apply in order.",
            items={
                "type": "object",
                "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}},
            },
        ),
        "dry_run": _p("boolean", "Show the diff without writing.", default=False),
        "source": _p("string", "Current path."),
        "destination": _p("string", "New path."),
        "pattern": _p("string", "Glob pattern to match."),
        "exclude": _p("array", "Glob patterns to skip.", items={"type": "string"}),
        "depth": _p("integer", "Levels to descend.", default=3),
        "encoding": _p("string", "Text encoding.", default="utf-8"),
        "follow_symlinks": _p("boolean", "Follow symbolic links.", default=False),
        "max_bytes": _p("integer", "Stop after this many bytes.", default=1048576),
    },
    "generic": ["encoding", "follow_symlinks", "max_bytes"],
    "notes": [
        "Only paths inside the allowed directories are accessible.",
        "Text files are read as UTF-8.",
        "Paths may be absolute or relative to the first allowed directory.",
    ],
    "tools": [
        ("fs_read_file", "Read a text file.", ("path",), (), "Read {file} for me"),
        (
            "fs_read_multiple_files",
            "Read several files at once.",
            ("paths",),
            (),
            "Open {file} and the README together",
        ),
        (
            "fs_write_file",
            "Create or overwrite a file.",
            ("path", "content"),
            (),
            "Save these notes to {file}",
        ),
        (
            "fs_edit_file",
            "Make line edits to a text file.",
            ("path", "edits"),
            ("dry_run",),
            "In {file}, replace the old port number with 8080",
        ),
        (
            "fs_create_directory",
            "Create a directory, with parents.",
            ("path",),
            (),
            "Make a folder {folder}",
        ),
        (
            "fs_list_directory",
            "List the entries of a directory.",
            ("path",),
            (),
            "What's in the {folder} folder?",
        ),
        (
            "fs_directory_tree",
            "Recursive tree of a directory.",
            ("path",),
            ("depth", "exclude"),
            "Show me the folder structure under {folder}",
        ),
        (
            "fs_move_file",
            "Move or rename a file or directory.",
            ("source", "destination"),
            (),
            "Rename {file} to {file}.bak",
        ),
        (
            "fs_search_files",
            "Find files by name pattern.",
            ("path", "pattern"),
            ("exclude",),
            "Find all the {ext} files under {folder}",
        ),
        (
            "fs_get_file_info",
            "Size, times and permissions of a file.",
            ("path",),
            (),
            "When was {file} last modified?",
        ),
    ],
}

# -- database ---------------------------------------------------------------------------------
SERVERS["database"] = {
    "profile": (20, 410),
    "params": {
        "database": _p(
            "string",
            "Name of the database to use. Defaults to the connection's default database if omitted.",
        ),
        "schema": _p(
            "string",
            "Schema (namespace) containing the object, e.g. 'public' or 'analytics'. Defaults to the search path.",
        ),
        "table": _p(
            "string",
            "Table name, unqualified. Use the schema parameter for tables outside the default schema.",
        ),
        "sql": _p(
            "string",
            "A single SQL statement in the server's dialect (PostgreSQL). Parameters must be passed separately, never interpolated.",
        ),
        "params": _p(
            "array",
            "Positional parameters bound to $1, $2, ... placeholders in the statement, in order.",
            items={},
        ),
        "limit": _p(
            "integer",
            "Maximum number of rows to return; results are truncated beyond it to protect the context window.",
            default=100,
            maximum=10000,
        ),
        "timeout_ms": _p(
            "integer",
            "Statement timeout in milliseconds; the query is cancelled when it runs longer.",
            default=30000,
        ),
        "columns": _p(
            "array",
            "Column definitions, each with a name, a SQL type, and whether it may be null.",
            items={
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "nullable": {"type": "boolean"},
                },
                "required": ["name", "type"],
            },
        ),
        "if_not_exists": _p(
            "boolean", "Do nothing instead of failing when the object already exists.", default=True
        ),
        "cascade": _p(
            "boolean",
            "Also drop objects that depend on this one (views, foreign keys). Use with care.",
            default=False,
        ),
        "column": _p("string", "Column name."),
        "operation": _p(
            "string",
            "Change to apply to the table.",
            enum=["add_column", "drop_column", "rename_column", "alter_type", "set_default"],
        ),
        "new_name": _p("string", "New name for the renamed object."),
        "index_name": _p(
            "string", "Name of the index; generated from the table and columns when omitted."
        ),
        "unique": _p(
            "boolean", "Create a unique index that rejects duplicate values.", default=False
        ),
        "rows": _p(
            "array",
            "Rows to insert, each an object mapping column names to values.",
            items={"type": "object"},
        ),
        "where": _p(
            "string",
            "SQL condition selecting the rows (without the WHERE keyword); required so that a whole table is never changed by mistake.",
        ),
        "values": _p("object", "Column names mapped to their new values."),
        "returning": _p(
            "array", "Columns to return from the affected rows.", items={"type": "string"}
        ),
        "analyze": _p(
            "boolean",
            "Run the statement and report real timings (EXPLAIN ANALYZE) instead of estimates only.",
            default=False,
        ),
        "format": _p(
            "string", "Output format of the plan or export.", enum=["text", "json", "csv"]
        ),
        "pid": _p(
            "integer", "Backend process id of the query, from the list of active connections."
        ),
        "destination": _p("string", "Path or object-storage URL where the file is written."),
        "include_system": _p(
            "boolean",
            "Include system schemas such as pg_catalog and information_schema.",
            default=False,
        ),
        "dry_run": _p(
            "boolean",
            "Validate and report what would change without committing the transaction.",
            default=False,
        ),
        **COMMON,
        "connection": _p(
            "string",
            "Name of the configured connection to use when several are set up (e.g. 'primary', 'replica'); reads may go to a replica.",
        ),
    },
    "generic": [
        "database",
        "connection",
        "timeout_ms",
        "response_format",
        "include_raw",
        "request_id",
    ],
    "notes": [
        "Runs inside a transaction that is rolled back on error.",
        "Read-only connections reject statements that modify data; use a connection with write access.",
        "Identifiers are quoted automatically; pass them exactly as they appear in the catalog.",
        "Large results are truncated to the limit and the response says how many rows were omitted.",
        "Times are returned in UTC as ISO 8601 strings; numeric columns keep their full precision as strings when needed.",
        "Statements are logged with their duration for auditing; parameters are redacted from the log.",
        "PostgreSQL 12 or later; other dialects are rejected with the server's error message.",
    ],
    "tools": [
        (
            "db_list_databases",
            "List the databases on the server with their sizes.",
            (),
            ("include_system",),
            "Which databases are on the server?",
        ),
        (
            "db_list_schemas",
            "List the schemas of a database.",
            ("database",),
            ("include_system",),
            "What schemas does the {db} database have?",
        ),
        (
            "db_list_tables",
            "List the tables of a schema with row estimates.",
            ("database",),
            ("schema",),
            "List the tables in {db}",
        ),
        (
            "db_describe_table",
            "Describe a table: columns, types, nullability, defaults, keys and indexes.",
            ("table",),
            ("schema", "database"),
            "What columns does the {table} table have?",
        ),
        (
            "db_run_select_query",
            "Run a read-only SELECT query and return the rows.",
            ("sql",),
            ("params", "limit", "timeout_ms", "database"),
            "How many {table} were created last month?",
        ),
        (
            "db_execute_statement",
            "Execute a data-changing SQL statement (INSERT, UPDATE, DELETE, DDL).",
            ("sql",),
            ("params", "timeout_ms", "dry_run", "database"),
            "Run this migration SQL against {db}",
        ),
        (
            "db_explain_query",
            "Show the execution plan of a query to find slow parts.",
            ("sql",),
            ("analyze", "format", "database"),
            "Why is the {table} report query so slow? Show me the plan",
        ),
        (
            "db_create_table",
            "Create a table with the given columns.",
            ("table", "columns"),
            ("schema", "if_not_exists"),
            "Create a table {table}_archive with id, payload and created_at",
        ),
        (
            "db_alter_table",
            "Change a table's structure: add, drop, rename or retype a column.",
            ("table", "operation", "column"),
            ("new_name", "schema"),
            "Add a deleted_at column to {table}",
        ),
        (
            "db_drop_table",
            "Drop a table.",
            ("table",),
            ("cascade", "schema"),
            "Drop the old {table}_tmp table",
        ),
        (
            "db_create_index",
            "Create an index on columns of a table.",
            ("table", "columns"),
            ("index_name", "unique", "schema"),
            "Add an index on {table}.customer_id",
        ),
        (
            "db_list_indexes",
            "List the indexes of a table with their definitions and sizes.",
            ("table",),
            ("schema",),
            "Which indexes exist on {table}?",
        ),
        (
            "db_insert_rows",
            "Insert rows into a table.",
            ("table", "rows"),
            ("returning", "schema"),
            "Insert these three rows into {table}",
        ),
        (
            "db_update_rows",
            "Update the rows of a table matching a condition.",
            ("table", "values", "where"),
            ("returning", "dry_run"),
            "Mark {table} row {number} as archived",
        ),
        (
            "db_delete_rows",
            "Delete the rows of a table matching a condition.",
            ("table", "where"),
            ("returning", "dry_run"),
            "Delete the {table} rows older than 2019",
        ),
        (
            "db_export_query_csv",
            "Run a query and export the result as a CSV file.",
            ("sql", "destination"),
            ("params", "database"),
            "Export all {table} from March to a CSV",
        ),
        (
            "db_get_table_stats",
            "Get table statistics: size, row count, dead tuples, last vacuum and analyze.",
            ("table",),
            ("schema",),
            "How big is the {table} table and when was it last vacuumed?",
        ),
        (
            "db_list_active_connections",
            "List active connections and running queries with their durations.",
            (),
            ("database",),
            "What queries are running on the database right now?",
        ),
        (
            "db_kill_query",
            "Cancel a running query or terminate its connection.",
            ("pid",),
            (),
            "Kill query {number}, it's blocking everything",
        ),
        (
            "db_backup_database",
            "Start a logical backup of a database to a file.",
            ("database", "destination"),
            ("format",),
            "Back up the {db} database tonight",
        ),
    ],
}

# -- Slack ------------------------------------------------------------------------------------
SERVERS["slack"] = {
    "profile": (15, 290),
    "params": {
        "channel": _p(
            "string",
            "Channel id (C...) or name with '#', e.g. '#deploys'. Private channels need the bot to be a member.",
        ),
        "text": _p(
            "string",
            "Message text in Slack mrkdwn: *bold*, _italic_, <url|label>, <@U123> mentions.",
        ),
        "thread_ts": _p("string", "Timestamp of the parent message, to reply inside its thread."),
        "reply_broadcast": _p(
            "boolean", "Also post the thread reply to the channel.", default=False
        ),
        "timestamp": _p("string", "Timestamp (ts) of the message, as returned when it was posted."),
        "name": _p("string", "Emoji name without colons, e.g. 'white_check_mark'."),
        "limit": _p("integer", "Maximum number of items to return (1-200).", default=50),
        "oldest": _p("string", "Only messages after this Unix timestamp."),
        "latest": _p("string", "Only messages before this Unix timestamp."),
        "cursor": _p("string", "Pagination cursor from a previous response."),
        "user": _p("string", "User id (U...) of the person."),
        "users": _p("array", "User ids to invite.", items={"type": "string"}),
        "query": _p(
            "string",
            "Search query; supports 'in:#channel', 'from:@user' and date modifiers such as 'after:2024-01-01'.",
        ),
        "is_private": _p("boolean", "Create a private channel.", default=False),
        "topic": _p("string", "New channel topic (250 characters at most)."),
        "filename": _p("string", "Name of the uploaded file."),
        "content": _p("string", "File content as text."),
        "post_at": _p(
            "integer", "Unix time when the message should be sent (up to 120 days ahead)."
        ),
        "unfurl_links": _p("boolean", "Show link previews.", default=True),
        "team_id": _p(
            "string", "Workspace (team) id when the bot is installed in several workspaces."
        ),
        "include_locale": _p(
            "boolean", "Include the locale of users and channels in the result.", default=False
        ),
        **COMMON,
    },
    "generic": [
        "team_id",
        "include_locale",
        "cursor",
        "response_format",
        "timeout_s",
        "request_id",
        "include_raw",
    ],
    "notes": [
        "Requires the bot to be installed in the workspace with the matching scopes.",
        "Rate limited per method; retries after the delay Slack returns.",
        "Channel names are resolved to ids automatically; archived channels are skipped.",
        "Timestamps (ts) are strings; keep them exactly as returned.",
    ],
    "tools": [
        (
            "slack_list_channels",
            "List public channels in the workspace.",
            (),
            ("limit", "cursor"),
            "What Slack channels do we have?",
        ),
        (
            "slack_post_message",
            "Post a message to a Slack channel.",
            ("channel", "text"),
            ("unfurl_links",),
            "Post in {channel} that {note}",
        ),
        (
            "slack_reply_to_thread",
            "Reply in the thread of a Slack message.",
            ("channel", "thread_ts", "text"),
            ("reply_broadcast",),
            "Reply in the thread in {channel} that {note}",
        ),
        (
            "slack_add_reaction",
            "Add an emoji reaction to a message.",
            ("channel", "timestamp", "name"),
            (),
            "React with a checkmark to the last message in {channel}",
        ),
        (
            "slack_get_channel_history",
            "Get recent messages of a channel.",
            ("channel",),
            ("limit", "oldest", "latest"),
            "What did people say in {channel} today?",
        ),
        (
            "slack_get_thread_replies",
            "Get all replies in a message thread.",
            ("channel", "thread_ts"),
            ("limit",),
            "Show me the replies to that thread in {channel}",
        ),
        (
            "slack_get_users",
            "List workspace members with basic profile information.",
            (),
            ("limit", "cursor"),
            "Who is in our Slack workspace?",
        ),
        (
            "slack_get_user_profile",
            "Get a user's full profile: name, title, time zone, status.",
            ("user",),
            (),
            "What's {person}'s title and time zone on Slack?",
        ),
        (
            "slack_search_messages",
            "Search messages across channels.",
            ("query",),
            ("limit",),
            "Search Slack for messages about {term}",
        ),
        (
            "slack_create_channel",
            "Create a new channel.",
            ("name",),
            ("is_private",),
            "Create a Slack channel for the {term} incident",
        ),
        (
            "slack_invite_to_channel",
            "Invite users to a channel.",
            ("channel", "users"),
            (),
            "Invite {person} to {channel}",
        ),
        (
            "slack_set_channel_topic",
            "Set the topic of a channel.",
            ("channel", "topic"),
            (),
            "Set the topic of {channel} to '{title}'",
        ),
        (
            "slack_upload_file",
            "Upload a text file or snippet to channels.",
            ("channel", "filename", "content"),
            (),
            "Share the log snippet as a file in {channel}",
        ),
        (
            "slack_schedule_message",
            "Schedule a message to be posted later.",
            ("channel", "text", "post_at"),
            (),
            "Remind {channel} tomorrow at 9 that {note}",
        ),
        (
            "slack_pin_message",
            "Pin a message to a channel.",
            ("channel", "timestamp"),
            (),
            "Pin the release announcement in {channel}",
        ),
    ],
}

# -- web --------------------------------------------------------------------------------------
SERVERS["web"] = {
    "profile": (10, 220),
    "params": {
        "query": _p(
            "string", "Search terms; quotes for exact phrases, a minus sign to exclude words."
        ),
        "url": _p("string", "Absolute http(s) URL of the page."),
        "count": _p("integer", "Number of results (1-20).", default=10),
        "country": _p("string", "Two-letter country code to localize results."),
        "freshness": _p(
            "string", "Only results from this period.", enum=["day", "week", "month", "year"]
        ),
        "max_length": _p("integer", "Maximum characters of content to return.", default=8000),
        "start_index": _p(
            "integer", "Character offset to continue a truncated page from.", default=0
        ),
        "full_page": _p("boolean", "Capture the whole scrollable page.", default=False),
        "width": _p("integer", "Viewport width in pixels.", default=1280),
        "same_domain": _p("boolean", "Only links to the page's own domain.", default=False),
        "user_agent": _p("string", "User-Agent header to send."),
        "locale": _p("string", "Preferred language, e.g. 'en-US'."),
        "timeout_s": _p("number", "Seconds before giving up.", default=15),
        "response_format": COMMON["response_format"],
        "request_id": COMMON["request_id"],
    },
    "generic": ["user_agent", "locale", "timeout_s", "response_format", "request_id"],
    "notes": [
        "Pages are fetched with a 15 s timeout.",
        "robots.txt is honoured.",
        "Content is returned as plain text unless stated otherwise.",
        "Results may be cached for up to an hour.",
    ],
    "tools": [
        (
            "web_search",
            "Search the web and return titles, URLs and snippets.",
            ("query",),
            ("count", "country", "freshness"),
            "Search the web for {term}",
        ),
        (
            "web_fetch_url",
            "Fetch a web page and return its text.",
            ("url",),
            ("max_length", "start_index"),
            "Fetch {url} for me",
        ),
        (
            "web_fetch_markdown",
            "Fetch a web page converted to Markdown.",
            ("url",),
            ("max_length",),
            "Get {url} as markdown",
        ),
        (
            "web_extract_links",
            "List the links found on a web page.",
            ("url",),
            ("same_domain",),
            "What pages does {url} link to?",
        ),
        (
            "web_take_screenshot",
            "Take a screenshot of a web page.",
            ("url",),
            ("full_page", "width"),
            "Take a screenshot of {url}",
        ),
        (
            "web_news_search",
            "Search recent news articles.",
            ("query",),
            ("count", "freshness"),
            "Any news about {term} this week?",
        ),
        (
            "web_image_search",
            "Search images on the web.",
            ("query",),
            ("count",),
            "Find images of {term}",
        ),
        (
            "web_get_page_metadata",
            "Get a page's title, description and social tags.",
            ("url",),
            (),
            "What's the title and description of {url}?",
        ),
        (
            "web_check_url_status",
            "Check whether a URL responds and how fast.",
            ("url",),
            (),
            "Is {url} up?",
        ),
        (
            "web_summarize_page",
            "Fetch a web page and summarize it.",
            ("url",),
            ("max_length",),
            "Summarize {url}",
        ),
    ],
}

# -- Jira -------------------------------------------------------------------------------------
SERVERS["jira"] = {
    "profile": (35, 470),
    "params": {
        "issue_key": _p(
            "string",
            "Key of the Jira issue, project key and number, e.g. 'PAY-1432'. Keys of moved issues still resolve.",
        ),
        "project_key": _p(
            "string",
            "Key of the Jira project in capitals, e.g. 'PAY'. Find keys with the project listing tool.",
        ),
        "jql": _p(
            "string",
            "JQL query, e.g. 'project = PAY AND status = \"In Progress\" ORDER BY updated DESC'. Field names and values with spaces must be quoted.",
        ),
        "fields": _p(
            "array",
            "Fields to return for each issue; fewer fields answer faster. Use '*all' for every field.",
            items={"type": "string"},
        ),
        "max_results": _p(
            "integer",
            "Maximum number of items to return (1-100). Use start_at to page through more.",
            default=50,
        ),
        "start_at": _p("integer", "Index of the first item to return, for pagination.", default=0),
        "summary": _p(
            "string", "One-line summary of the issue, shown in boards and search results."
        ),
        "description": _p(
            "string",
            "Detailed description in Jira wiki markup or plain text. Steps to reproduce and acceptance criteria go here.",
        ),
        "issue_type": _p(
            "string",
            "Type of issue; must exist in the project's issue type scheme.",
            enum=["Bug", "Task", "Story", "Epic", "Sub-task"],
        ),
        "priority": _p(
            "string", "Priority of the issue.", enum=["Highest", "High", "Medium", "Low", "Lowest"]
        ),
        "assignee": _p(
            "string",
            "Account id of the assignee; use the user search tool to find it from a name or email.",
        ),
        "labels": _p(
            "array", "Labels to set; labels are created on first use.", items={"type": "string"}
        ),
        "components": _p(
            "array", "Names of project components to set on the issue.", items={"type": "string"}
        ),
        "parent_key": _p(
            "string", "Key of the parent epic or issue (for sub-tasks and stories in an epic)."
        ),
        "due_date": _p("string", "Due date as YYYY-MM-DD."),
        "transition_id": _p(
            "string",
            "Id of the workflow transition to perform; list the available ones with the transitions tool first.",
        ),
        "comment": _p(
            "string", "Comment text to add; supports Jira wiki markup and @mentions of account ids."
        ),
        "body": _p("string", "Comment body in Jira wiki markup."),
        "visibility": _p(
            "string",
            "Restrict the comment to a project role, e.g. 'Developers'. Omit for a public comment.",
        ),
        "time_spent": _p("string", "Time spent in Jira duration format, e.g. '2h 30m' or '1d'."),
        "started": _p(
            "string",
            "When the work started, ISO 8601 with offset, e.g. '2024-05-01T09:00:00.000+0000'.",
        ),
        "link_type": _p("string", "Name of the link type, e.g. 'Blocks', 'Relates', 'Duplicate'."),
        "inward_issue": _p(
            "string", "Key of the issue on the inward side of the link (e.g. the blocked one)."
        ),
        "outward_issue": _p(
            "string", "Key of the issue on the outward side of the link (e.g. the blocker)."
        ),
        "account_id": _p("string", "Atlassian account id of the user."),
        "query": _p("string", "Text to match against user names and email addresses."),
        "filename": _p("string", "Name of the attached file, with its extension."),
        "content_base64": _p("string", "File content encoded in base64 (10 MB at most)."),
        "name": _p("string", "Name of the object to create (version, component or sprint)."),
        "release_date": _p("string", "Planned release date as YYYY-MM-DD."),
        "board_id": _p("integer", "Id of the Scrum or Kanban board; list boards to find it."),
        "sprint_id": _p("integer", "Id of the sprint; list the board's sprints to find it."),
        "goal": _p("string", "Sprint goal shown on the board."),
        "start_date": _p("string", "Start as an ISO 8601 date-time."),
        "end_date": _p("string", "End as an ISO 8601 date-time."),
        "issue_keys": _p(
            "array", "Keys of the issues to move (50 at most).", items={"type": "string"}
        ),
        "version_id": _p("string", "Id of the project version."),
        "notify_users": _p("boolean", "Send email notifications for this change.", default=True),
        "expand": _p(
            "array",
            "Extra data to include, e.g. 'changelog', 'renderedFields', 'transitions'.",
            items={"type": "string"},
        ),
        **COMMON,
        "site": _p(
            "string",
            "Jira Cloud site to use when several are configured, e.g. 'acme.atlassian.net'. Defaults to the first configured site.",
        ),
    },
    "generic": [
        "site",
        "fields",
        "expand",
        "notify_users",
        "response_format",
        "timeout_s",
        "include_raw",
        "request_id",
    ],
    "notes": [
        "Requires a Jira Cloud API token with access to the project; permissions are those of the token's user.",
        "Custom fields are addressed by id (customfield_10010); use the issue fields listing to find them.",
        "Rich text fields accept Jira wiki markup; Atlassian Document Format is converted automatically.",
        "Returns the issue key and URL of created or changed issues so they can be linked in replies.",
        "Errors carry Jira's field-level messages, e.g. a required custom field missing in the project's create screen.",
        "Dates are interpreted in the Jira user's time zone unless an offset is given.",
        "Issue keys are case-insensitive; project keys are upper case.",
        "Results follow the permissions and issue security levels of the token's user; hidden issues are not reported as missing.",
        "Jira Data Center 9 and Jira Cloud are supported; some agile endpoints need Jira Software.",
    ],
    "tools": [
        (
            "jira_search_issues",
            "Search Jira issues with JQL.",
            ("jql",),
            ("fields", "max_results", "start_at", "expand"),
            "Which Jira tickets in {project} are in progress?",
        ),
        (
            "jira_get_issue",
            "Get a Jira issue with its fields, status and comments.",
            ("issue_key",),
            ("fields", "expand"),
            "Show me {ticket}",
        ),
        (
            "jira_create_issue",
            "Create a Jira issue (bug, task, story, epic or sub-task).",
            ("project_key", "summary", "issue_type"),
            (
                "description",
                "priority",
                "assignee",
                "labels",
                "components",
                "parent_key",
                "due_date",
            ),
            "File a Jira bug in {project}: {title}",
        ),
        (
            "jira_update_issue",
            "Update fields of a Jira issue.",
            ("issue_key",),
            (
                "summary",
                "description",
                "priority",
                "labels",
                "components",
                "due_date",
                "notify_users",
            ),
            "Bump {ticket} to high priority",
        ),
        (
            "jira_delete_issue",
            "Delete a Jira issue and its sub-tasks.",
            ("issue_key",),
            ("notify_users",),
            "Delete the duplicate ticket {ticket}",
        ),
        (
            "jira_get_transitions",
            "List the workflow transitions available for an issue.",
            ("issue_key",),
            (),
            "What statuses can {ticket} move to?",
        ),
        (
            "jira_transition_issue",
            "Move a Jira issue through its workflow (e.g. to In Progress or Done).",
            ("issue_key", "transition_id"),
            ("comment",),
            "Move {ticket} to Done",
        ),
        (
            "jira_add_comment",
            "Add a comment to a Jira issue.",
            ("issue_key", "body"),
            ("visibility",),
            "Comment on {ticket} that {note}",
        ),
        (
            "jira_get_comments",
            "Get the comments of a Jira issue.",
            ("issue_key",),
            ("max_results", "start_at"),
            "What's the latest discussion on {ticket}?",
        ),
        (
            "jira_assign_issue",
            "Assign a Jira issue to a user, or unassign it.",
            ("issue_key", "account_id"),
            (),
            "Assign {ticket} to {person}",
        ),
        (
            "jira_add_worklog",
            "Log time spent on a Jira issue.",
            ("issue_key", "time_spent"),
            ("started", "comment"),
            "Log 2 hours on {ticket}",
        ),
        (
            "jira_get_worklogs",
            "Get the time logged on a Jira issue.",
            ("issue_key",),
            (),
            "How much time has been logged on {ticket}?",
        ),
        (
            "jira_link_issues",
            "Link two Jira issues (blocks, relates to, duplicates).",
            ("link_type", "inward_issue", "outward_issue"),
            ("comment",),
            "Mark {ticket} as blocked by {ticket2}",
        ),
        (
            "jira_get_issue_links",
            "List the links of a Jira issue to other issues.",
            ("issue_key",),
            (),
            "What is {ticket} blocked by?",
        ),
        (
            "jira_add_watcher",
            "Add a user as a watcher of a Jira issue.",
            ("issue_key", "account_id"),
            (),
            "Add {person} as a watcher on {ticket}",
        ),
        (
            "jira_remove_watcher",
            "Remove a watcher from a Jira issue.",
            ("issue_key", "account_id"),
            (),
            "Stop {person} watching {ticket}",
        ),
        (
            "jira_get_watchers",
            "List the watchers of a Jira issue.",
            ("issue_key",),
            (),
            "Who is watching {ticket}?",
        ),
        (
            "jira_add_attachment",
            "Attach a file to a Jira issue.",
            ("issue_key", "filename", "content_base64"),
            (),
            "Attach the error log to {ticket}",
        ),
        (
            "jira_list_projects",
            "List the Jira projects you can see.",
            (),
            ("max_results", "start_at"),
            "Which Jira projects do we have?",
        ),
        (
            "jira_get_project",
            "Get a Jira project's details: lead, issue types, components.",
            ("project_key",),
            ("expand",),
            "Who leads the {project} project in Jira?",
        ),
        (
            "jira_get_project_components",
            "List the components of a Jira project.",
            ("project_key",),
            (),
            "What components does {project} have?",
        ),
        (
            "jira_create_component",
            "Create a component in a Jira project.",
            ("project_key", "name"),
            ("description", "assignee"),
            "Add a '{term}' component to {project}",
        ),
        (
            "jira_list_versions",
            "List the versions (releases) of a Jira project.",
            ("project_key",),
            (),
            "What releases are planned for {project}?",
        ),
        (
            "jira_create_version",
            "Create a version (release) in a Jira project.",
            ("project_key", "name"),
            ("description", "release_date", "start_date"),
            "Create release {version} in {project}",
        ),
        (
            "jira_release_version",
            "Mark a Jira version as released.",
            ("version_id",),
            ("release_date",),
            "Mark version {version} of {project} as released",
        ),
        (
            "jira_list_boards",
            "List Scrum and Kanban boards.",
            (),
            ("project_key", "max_results"),
            "Which boards does {project} use?",
        ),
        (
            "jira_get_board_issues",
            "Get the issues on a board.",
            ("board_id",),
            ("jql", "fields", "max_results"),
            "What's on the {project} board?",
        ),
        (
            "jira_list_sprints",
            "List the sprints of a board.",
            ("board_id",),
            ("max_results",),
            "List the sprints of the {project} board",
        ),
        (
            "jira_get_sprint",
            "Get a sprint's dates, goal and state.",
            ("sprint_id",),
            (),
            "When does the current {project} sprint end?",
        ),
        (
            "jira_create_sprint",
            "Create a sprint on a board.",
            ("board_id", "name"),
            ("goal", "start_date", "end_date"),
            "Create the next sprint for {project}",
        ),
        (
            "jira_start_sprint",
            "Start a future sprint.",
            ("sprint_id", "start_date", "end_date"),
            ("goal",),
            "Start the new {project} sprint today",
        ),
        (
            "jira_close_sprint",
            "Close an active sprint.",
            ("sprint_id",),
            (),
            "Close the current {project} sprint",
        ),
        (
            "jira_move_issues_to_sprint",
            "Move issues into a sprint.",
            ("sprint_id", "issue_keys"),
            (),
            "Pull {ticket} into the current sprint",
        ),
        (
            "jira_search_users",
            "Find Jira users by name or email.",
            ("query",),
            ("max_results",),
            "Find {person}'s Jira account",
        ),
        (
            "jira_get_epic_issues",
            "List the issues in an epic.",
            ("issue_key",),
            ("fields", "max_results"),
            "What stories are in epic {ticket}?",
        ),
    ],
}

PRECONDITIONS: dict[str, dict[str, Any]] = {
    name: {"db_write_access": True}
    for name in (
        "db_execute_statement",
        "db_create_table",
        "db_alter_table",
        "db_drop_table",
        "db_create_index",
        "db_insert_rows",
        "db_update_rows",
        "db_delete_rows",
        "db_kill_query",
        "db_backup_database",
    )
}
"""Tools that need state the agent may not have (database writes need write access)."""

VALUES: dict[str, list[str]] = {
    "repo": [
        "payments-api",
        "web-frontend",
        "infra-terraform",
        "mobile-app",
        "docs-site",
        "auth-service",
    ],
    "title": [
        "Login button unresponsive on Safari",
        "Upgrade to Node 22",
        "Flaky checkout test",
        "Add rate limiting to the export endpoint",
        "Broken link in onboarding email",
    ],
    "number": ["482", "1290", "77", "315", "2048", "96"],
    "note": [
        "the fix is deployed",
        "we need a review before Friday",
        "the outage is resolved",
        "this is blocked on the vendor",
        "QA signed off",
    ],
    "term": [
        "retry backoff",
        "OAuth token refresh",
        "memory leak",
        "GDPR export",
        "feature flags",
        "connection pooling",
    ],
    "branch": ["feature/rate-limit", "fix/safari-login", "chore/node-22", "release/2.4"],
    "path": ["src/config/settings.py", "README.md", "package.json", ".github/workflows/ci.yml"],
    "sha": ["9f3c2ab", "e41d0c7", "1a2b3c4"],
    "person": ["Priya Shah", "Marco Rossi", "Lena Vogel", "Sam Okafor"],
    "run": ["8812345", "8812901"],
    "file": ["notes/meeting.md", "config/app.yaml", "data/export.csv", "logs/server.log"],
    "folder": ["notes", "config", "data/raw", "scripts"],
    "ext": ["markdown", "YAML", "CSV", "Python"],
    "db": ["analytics", "billing", "crm"],
    "table": ["orders", "invoices", "customers", "sessions", "events"],
    "channel": ["#deploys", "#payments-team", "#incidents", "#general"],
    "url": [
        "https://example.com/pricing",
        "https://status.example.org",
        "https://blog.example.net/launch",
    ],
    "project": ["PAY", "WEB", "OPS", "MOB"],
    "ticket": ["PAY-1432", "WEB-887", "OPS-219", "MOB-56"],
    "ticket2": ["PAY-1401", "WEB-870", "OPS-200"],
    "version": ["2.4.0", "2.5.0", "3.0.0"],
}
"""Values for the `{slots}` of user requests."""

FOLLOW_UPS = (
    "Do the same for {value}.",
    "And now for {value}?",
    "Same again, but with {value}.",
    "Can you also do that for {value}?",
)
"""Vague follow-up turns that repeat the previous turn's tool on another value."""

CHIT_CHAT = (
    "Thanks, that's helpful.",
    "Great, give me a second to read that.",
    "Hmm, ok. Let me think about it.",
    "Perfect, thank you!",
    "Can you explain that in simpler words?",
)
"""Turns that need no tool."""
