"""The needs the search benchmark asks for, as an agent would phrase them, each with the tool it wants.

Written from the need, not copied from the tools' descriptions: an agent says "will it rain",
not "chance of precipitation". The last few carry the typos agents make.
"""

from __future__ import annotations

QUERIES: tuple[tuple[str, str], ...] = (
    # lorenz-local
    ("change the state of a ticket on my local board to done", "local_update_status"),
    ("mark a local board task as in progress", "local_update_status"),
    ("leave a note on a local board issue", "local_comment"),
    ("open a new task on the local board", "local_create_issue"),
    ("file a bug on the local board", "local_create_issue"),
    ("show me the details and the discussion of local board item BOARD-12", "local_read_issue"),
    ("find local board issues labelled bug, sorted by title", "local_query"),
    ("filter the items of my local board by state", "local_query"),
    # lorenz-jira
    ("fetch a Jira ticket by its key", "jira_read_issue"),
    ("search Jira with a JQL expression", "jira_query"),
    ("transition the Jira ticket to Done", "jira_update_status"),
    ("see what people wrote under a Jira issue", "jira_list_comments"),
    ("post a comment on a Jira ticket", "jira_comment"),
    ("fix a typo in a comment I already left on Jira", "jira_update_comment"),
    ("edit my existing Jira comment", "jira_update_comment"),
    ("raise a new Jira ticket and assign it to someone", "jira_create_issue"),
    ("which Jira issues are in the In Progress state", "jira_query"),
    ("get the description of one Jira issue", "jira_read_issue"),
    # lorenz-linear
    ("run a GraphQL mutation against Linear", "linear_graphql"),
    ("ask the Linear API for my team's cycles", "linear_graphql"),
    ("call Linear's API directly with my own query", "linear_graphql"),
    # lorenz-slack
    ("set the state of a request tracked in Slack", "slack_update_status"),
    ("answer in the Slack thread of a request", "slack_comment"),
    ("tell the requester on Slack that the fix is deployed", "slack_comment"),
    ("keep my plan as a checklist in the Slack thread", "slack_workpad"),
    ("update my progress note in Slack", "slack_workpad"),
    ("read the whole Slack conversation about an issue", "slack_read_thread"),
    ("get the permalink and the reactions of a Slack request", "slack_read_thread"),
    ("list the Slack requests still open in a channel", "slack_query"),
    ("who is the Slack user U0123ABC", "slack_user_info"),
    ("look up someone's display name on Slack", "slack_user_info"),
    ("what was said in the channel just before this request was posted", "slack_channel_context"),
    ("the surrounding Slack messages of a tracked request", "slack_channel_context"),
    # the weather example
    ("will it rain in Paris tomorrow", "weather_get_forecast"),
    ("temperature outlook for the next three days", "weather_get_forecast"),
    ("which cities can I get the weather for", "weather_list_cities"),
    ("daily highs and lows for London this week", "weather_get_forecast"),
    ("the places the forecast supports", "weather_list_cities"),
    # mcp-server-time
    ("what time is it right now in Tokyo", "get_current_time"),
    ("convert 3pm New York time to Berlin time", "convert_time"),
    ("current clock time in a given timezone", "get_current_time"),
    ("translate a meeting time from one timezone to another", "convert_time"),
    # server-everything
    ("repeat my input back to me", "echo"),
    ("test that the server echoes a string", "echo"),
    ("add two numbers together", "get-sum"),
    ("calculate the total of a and b", "get-sum"),
    ("show me the server's environment variables", "get-env"),
    ("debug how the MCP server is configured", "get-env"),
    ("send me back a small picture", "get-tiny-image"),
    ("get the MCP logo as an image", "get-tiny-image"),
    ("gzip some data and hand it back as a resource", "gzip-file-as-resource"),
    ("compress a file", "gzip-file-as-resource"),
    ("switch on random log messages", "toggle-simulated-logging"),
    ("turn simulated logging off", "toggle-simulated-logging"),
    ("start sending resource subscription updates", "toggle-subscriber-updates"),
    ("run a slow operation that reports its progress", "trigger-long-running-operation"),
    ("a long task with progress notifications in several steps", "trigger-long-running-operation"),
    ("give me links to a few resources", "get-resource-links"),
    ("a reference to one resource by its id", "get-resource-reference"),
    ("a message that carries annotations", "get-annotated-message"),
    ("return structured content that matches an output schema", "get-structured-content"),
    ("do some deep research on a topic", "simulate-research-query"),
    ("investigate a subject and synthesize what you find", "simulate-research-query"),
    # with the typos agents make
    ("coment on a jira tiket", "jira_comment"),
    ("convrt a time betwen timezones", "convert_time"),
    ("wether forcast for Rome", "weather_get_forecast"),
    ("slack usr profle", "slack_user_info"),
    ("updte the staus of a local board isue", "local_update_status"),
    ("compres a file with gzp", "gzip-file-as-resource"),
    ("enviroment variabels of the server", "get-env"),
)
