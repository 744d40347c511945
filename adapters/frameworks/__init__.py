"""Other frameworks' conversation stores, built on ``ConversationStore``.

``openai_agents``: the OpenAI Agents SDK ``Session``; ``pydantic_ai``: Pydantic
AI's ``ConversationStore``. Each imports its framework, so import the module
you need (not this package) to keep the others optional.
"""
