"""Framework-free building blocks: no LangChain import."""
