"""Gates of the lazily compiled patterns (see lazyre): written by
``python -m lessonloop.lazyre`` from the patterns themselves; do not edit. A
pattern edited since has no gate here (it is then compiled at its first use)."""

GATES = {
    (",\\s*(?:and|but|so)\\s+|\\s+but\\s+|;\\s*|,\\s*(?=(?:don't|do not|dont|never)\\s)", 2):
        (None, (',', ';', 'and', 'but', 'so')),
    ("\\b(?:is|are|was|were|do|does|did|should|must|can|will|would|it's|that's|could)\\s*$", 2):
        (('are', 'can', 'could', 'did', 'do', 'is', "it's", 'must', 'should', "that's", 'was', 'were', 'will', 'would'), ('are', 'can', 'could', 'did', 'do', 'is', "it's", 'must', 'should', "that's", 'was', 'were', 'will', 'would')),
    ("\\b(?:it|this|that)\\s+(?:doesn'?t|does not|isn'?t|is not)\\s+work(?:ing)?\\b|\\bnot working\\b|\\b(?:it'?s|is) broken\\b", 2):
        (('is broken', 'it', 'not working', 'that', 'this'), (' broken', 'work')),
    ("\\b(?:i|we)(?:'ve| have)? changed (?:my|our) minds?\\b([^:?]{0,120}):\\s+(.{8,300})$", 18):
        (('i changed my', 'i changed ou', 'i have', "i've", 'we changed m', 'we changed o', 'we have', "we've"), (' changed ',)),
    ("\\b(?:must|should|shall|needs? to|has to|have to)\\s+(?:never|always|not|only)\\b|\\b(?:must|has to|have to)\\b(?!\\s+(?:have\\b|'ve\\b|be\\s+\\w+ing\\b))", 2):
        (('has to', 'have to', 'must', 'need to', 'needs', 'shall', 'should'), ('has to', 'have to', 'must', 'need', 'shall', 'should')),
    ("\\b(?:not|no|never|n't|but|still|except|almost|however|yet|nearly|wrong|broken|fails?|failing|anymore)\\b|n't\\b", 2):
        (('almost', 'anymore', 'broken', 'but', 'except', 'fail', 'however', "n't", 'nearly', 'never', 'no', 'still', 'wrong', 'yet'), ('almost', 'anymore', 'broken', 'but', 'except', 'fail', 'however', "n't", 'nearly', 'never', 'no', 'still', 'wrong', 'yet')),
    ("\\bexplain\\w*|\\bwhat (?:does|is|are|do)\\b|\\bhow (?:does|do|is|can|would)\\b|\\bwhy (?:does|do|is|are|did)\\b|\\bunderstand\\b|\\bwalk me through\\b|\\bdescribe\\b|\\btell me (?:about|how|why|what)\\b|\\bwhat's\\b", 2):
        (('describe', 'explain', 'how can', 'how do', 'how is', 'how would', 'tell me abou', 'tell me how', 'tell me what', 'tell me why', 'understand', 'walk me thro', 'what are', 'what do', 'what is', "what's", 'why are', 'why did', 'why do', 'why is'), ('describe', 'explain', 'how ', 'tell me ', 'understand', 'walk me through', 'what ', "what's", 'why ')),
    ("\\bfix\\w*|\\bbugs?\\b|\\bbroken\\b|\\berrors?\\b|\\bfail\\w*|\\bcrash\\w*|\\bdoesn'?t work\\b|\\bnot working\\b|\\bdebug\\w*|\\brepair\\b|\\bresolve\\b|\\bexception\\b|\\btraceback\\b|\\bissue\\b", 2):
        (('broken', 'bug', 'crash', 'debug', "doesn'", 'doesnt work', 'error', 'exception', 'fail', 'fix', 'issue', 'not working', 'repair', 'resolve', 'traceback'), ('broken', 'bug', 'crash', 'error', 'exception', 'fail', 'fix', 'issue', 'repair', 'resolve', 't work', 'traceback')),
    ("\\s*(?:[,;:\\u2014\\u2013]|\\s-)\\s*(?:decided|agreed|settled|that's final)$", 2):
        (None, ('agreed', 'decided', 'settled', "that's final")),
    ("^(.{3,80}?)\\s+still\\s+(?:does not|doesn't|doesnt|do not|don't|isn't|is not|won't|will not)\\s+work\\b", 18):
        (None, ('still',)),
    ("^(?:(?:(?:no(?:\\s+no)*|nope|nah|wrong|incorrect|actually|wait|hmm+|instead|not like that|not quite|that's not it|that is not it)\\s*(?:[,.!:;\\u2014\\u2013]|\\s-)+\\s*)|(?:(?:that|this|it)(?:'s| is| was) (?:(?:all|totally|completely) )?(?:wrong|incorrect|not right|not correct|not what i (?:asked|wanted|meant|said)(?: for)?)|you (?:got it wrong|misunderstood|broke (?:it|this|that))|wrong (?:file|approach|way))(?:\\s*(?:[,.!:;\\u2014\\u2013]|\\s-)+\\s*|\\s*$))+", 2):
        (('actually', 'hmm', 'incorrec', 'instead', 'it is al', 'it is co', 'it is in', 'it is no', 'it is to', 'it is wr', 'it was a', 'it was c', 'it was i', 'it was n', 'it was t', 'it was w', "it's all", "it's com", "it's inc", "it's not", "it's tot", "it's wro", 'nah', 'no', 'that is ', 'that was', "that's a", "that's c", "that's i", "that's n", "that's t", "that's w", 'this is ', 'this was', "this's a", "this's c", "this's i", "this's n", "this's t", "this's w", 'wait', 'wrong', 'you brok', 'you got ', 'you misu'), ('actually', 'broke ', 'hm', 'incorrect', 'instead', 'misunderstood', 'nah', 'no', 'wait', 'wrong'), True),
    ("^(?:(?:ok(?:ay)?|yes|yep|yeah|yup|great|nice|awesome|cool|thanks|thank you|wow|excellent|amazing|sweet|good|right)[\\s,!.\\u2014\\u2013-]+)*(?:perfect(?:ly)?|exactly(?: right| what i (?:wanted|needed|meant|asked for))?|(?:that|this|it)(?:'s| is) (?:exactly |just |absolutely )?(?:right|correct|it|perfect|what i (?:wanted|needed|meant|asked for)|much better|great|good|fine)|(?:that|this|it|everything|all) works(?: now| perfectly| great| fine| well)?|works (?:now|perfectly|great)|(?:that|this|it)(?: now)? looks (?:good|great|perfect|right)|looks (?:good|great|perfect|right)(?: to me)?|lgtm|spot on|nailed it|well done|good job|great job|nice work|great work|correct|bingo|you got it|that did it|that fixed it|fixed(?: it)?|yes,? exactly|exactly that|much better)(?:[\\s,!.\\u2014\\u2013-]+(?:(?:perfect(?:ly)?|exactly(?: right| what i (?:wanted|needed|meant|asked for))?|(?:that|this|it)(?:'s| is) (?:exactly |just |absolutely )?(?:right|correct|it|perfect|what i (?:wanted|needed|meant|asked for)|much better|great|good|fine)|(?:that|this|it|everything|all) works(?: now| perfectly| great| fine| well)?|works (?:now|perfectly|great)|(?:that|this|it)(?: now)? looks (?:good|great|perfect|right)|looks (?:good|great|perfect|right)(?: to me)?|lgtm|spot on|nailed it|well done|good job|great job|nice work|great work|correct|bingo|you got it|that did it|that fixed it|fixed(?: it)?|yes,? exactly|exactly that|much better)|thanks|thank you|thx|great|nice|awesome|now|!))*[\\s,!.]*$", 2):
        (('all wo', 'amazin', 'awesom', 'bingo', 'cool', 'correc', 'everyt', 'exactl', 'excell', 'fixed', 'good', 'great', 'it is ', 'it loo', 'it now', 'it wor', "it's a", "it's c", "it's e", "it's f", "it's g", "it's i", "it's j", "it's m", "it's p", "it's r", "it's w", 'lgtm', 'looks ', 'much b', 'nailed', 'nice', 'ok', 'perfec', 'right', 'spot o', 'sweet', 'thank ', 'thanks', 'that d', 'that f', 'that i', 'that l', 'that n', 'that w', "that's", 'this i', 'this l', 'this n', 'this w', "this's", 'well d', 'works ', 'wow', 'yeah', 'yep', 'yes', 'you go', 'yup'), None, True),
    ("^(?:(?:we|you|i want you to|i'd like you to|i would like you to|i need you to|please|let's|let us|we'll|we will|we're going to|we are going to|we're gonna|you'll|you will|you should|you must|you need to|you have to|we should|we must|we need to|we have to|we'd|we would|you'd|always|also|just|make sure to|make sure you)\\s+)+", 2):
        (('also', 'always', 'i need you t', 'i want you t', 'i would like', "i'd like you", 'just', 'let us', "let's", 'make sure to', 'make sure yo', 'please', 'we', 'you'), ('also', 'always', 'just', 'let us', "let's", 'make sure to', 'please', 'we', 'you'), True),
    ("^(?:also\\s+|and\\s+|but\\s+|so\\s+)?(?:we|i)\\s+(?:really\\s+)?(?:don't|do not|dont)\\s+(?:need|want)\\s+(?:any\\s+)?(?!to\\b)([^,;]{2,50}?)(?:\\s+(?:at all|anymore|any more))?$", 18):
        (('also', 'and', 'but', 'i', 'so', 'we'), ('need', 'want'), True),
    ("^(?:also\\s+|and\\s+|but\\s+|so\\s+)?(?:we|you)\\s+(?:don't|do not|dont)\\s+need\\s+to\\s+([^,;]{4,80}?)(?:\\s*[,;]\\s*(?:(?:let's|lets|let us|we can|you can)\\s+)?just\\s+([^,;]{2,60}))?$", 18):
        (('also', 'and', 'but', 'so', 'we', 'you'), ('need',), True),
    ("^(?:also\\s+|and\\s+|but\\s+|so\\s+)?we(?:'re| are)\\s+not\\s+(?:going\\s+to\\s+)?(doing|using|supporting|adding|keeping|writing|do|use|support|add|keep|write)\\s+([^,;]{2,80}?)(?:\\s*[,;]\\s*(?:we(?:'re| are)\\s+)?just\\s+([^,;]{2,80}))?$|^(?:also\\s+|and\\s+|but\\s+|so\\s+)?we\\s+(?:won't|will not|wont)\\s+(do|use|support|add|keep|write)\\s+([^,;]{2,80}?)$", 18):
        (('also', 'and', 'but', 'so', 'we'), ('not', "on't", 'ont'), True),
    ("^(?:but\\s+|and\\s+|so\\s+)?(i|we)(?:\\s+(do not|don't|dont)\\s+(?:really\\s+)?want|(?:'d|\\s+would)\\s+(?:like|prefer)|\\s+(?:really\\s+)?want)\\s+(?:you\\s+|us\\s+)?to\\s+(.+)$", 18):
        (('and', 'but', 'i', 'so', 'we'), ('like', 'prefer', 'want'), True),
    ("^(?:don't|do not|never)\\s+(?:stop|finish|quit|end)\\s+until\\s+(.{8,160})$", 2):
        (('do not', "don't", 'never'), ('until',), True),
    ("^(?:i\\s+(?:just\\s+|only\\s+)?(?:found out|realized|realised|learned|noticed|discovered)\\s+(?:now\\s+)?(?:that\\s+)?)?(.{2,60}?)\\s+(?:is|are)(?:\\s+not|n't)\\s+supported\\s+(?:by|in|on)\\s+([\\w.+-]+(?:\\s[A-Z0-9][\\w.+-]*)?)[\\s:;,(!.\\\\]*$", 2):
        (None, ('supported',)),
    ("^(?:if|when|unless|maybe|perhaps|probably|possibly|i think|i guess|i wonder|i'm not sure|not sure|it seems|apparently|in case|although|though|even if|i suppose|i believe|i don't know|i'm wondering|i was wondering|hopefully|ideally)\\b", 2):
        (('although', 'apparently', 'even if', 'hopefully', 'i believe', "i don't know", 'i guess', 'i suppose', 'i think', 'i was wonder', 'i wonder', "i'm not sure", "i'm wonderin", 'ideally', 'if', 'in case', 'it seems', 'maybe', 'not sure', 'perhaps', 'possibly', 'probably', 'though', 'unless', 'when'), None, True),
    ("^(?:let's|let us|lets)\\s+(?:also\\s+|just\\s+|then\\s+|now\\s+)?(do|switch to|migrate to|move to|keep|make (?:it|this|the \\w+))\\s+(.+)$", 18):
        (('let us', "let's", 'lets'), ('let',), True),
    ("^(?:let's|let us|lets|we'll|we will|we're going to|we are going to|we're gonna)\\s+(go with|stick with|stick to|standardi[sz]e on|settle on|adopt|keep using|stay with|use)\\s+(.+)$", 18):
        (('let us', "let's", 'lets', 'we are going', 'we will', "we'll", "we're going ", "we're gonna"), ('let us', "let's", 'lets', 'we are going to', 'we will', "we'll", "we're going to", "we're gonna"), True),
    ("^(?:please\\s+)?(?:don't|do not|dont)\\s+(.+)$", 18):
        (('do not', "don't", 'dont', 'please'), ('do',), True),
    ("^(?:please\\s+)?(?:don't|do not|dont)\\s+ever\\s+(.+)$", 18):
        (('do not', "don't", 'dont', 'please'), ('ever',), True),
    ("^(?:please\\s+)?(?:ensure|make sure)(?:\\s+that)?\\s+(.{10,160}?),?\\s+(?:or|otherwise)\\s+(.{2,40}?)\\s+(?:will not|won't|wont|doesn't|does not|can't|cannot|will fail to)\\s+work[.!]*$", 18):
        (('ensure', 'make sure', 'please'), ('ensure', 'make sure'), True),
    ("^(?:please\\s+)?(don't|do not|dont|never|stop)\\s+([\\w-]+)\\s+(.+?)\\s*(?:[,;]|\\s[\\u2014\\u2013-])\\s*(?:and\\s+|but\\s+)?(?:(?:always|instead|just|rather|please)\\s+)*([\\w-]+)\\s+(.+?)(?:\\s+instead)?$", 18):
        (('do not', "don't", 'dont', 'never', 'please', 'stop'), ('do not', "don't", 'dont', 'never', 'stop'), True),
    ("^(?:remember|keep in mind|don't forget|note)(?:\\s+that)?\\s+(?=\\w)", 2):
        (("don't forget", 'keep in mind', 'note', 'remember'), ("don't forget", 'keep in mind', 'note', 'remember'), True),
    ("^(?:should|shall|do(?!\\s+not\\b|n't|nt\\b)|does|did|is|are|was|were|why|how|what|where|which|who|whom|whose|would|will|am|isn't|aren't|doesn't|didn't|wouldn't|won't|can't|shouldn't|have you|has|any idea|is there|are there)\\b", 2):
        (('am', 'any idea', 'are', "can't", 'did', 'do', 'has', 'have you', 'how', 'is', 'shall', 'should', 'was', 'were', 'what', 'where', 'which', 'who', 'why', 'will', "won't", 'would'), None, True),
    ("^(?:the|our)\\s+([\\w .'-]{2,40}?)\\s+(?:is|lives at|is at)\\s+(\ue000\\d+\ue001)$", 18):
        (('our', 'the'), ('our', 'the'), True),
    ("^(?:we(?:'re| are)?|this (?:project|repo|repository|codebase|team|app)|our (?:project|repo|team|app|codebase))\\s+(?:always\\s+|only\\s+)?(?:use|uses|using)\\s+([^,;]{2,50}?)(?:,?\\s+(?:not|instead of|rather than)\\s+([^,;]{2,40}?)|\\s+(?:as|for)\\s+(?:our|its|the)\\s+([^,;]{2,40}?))?$", 18):
        (('our app', 'our codebase', 'our project', 'our repo', 'our team', 'this app', 'this codebas', 'this project', 'this repo', 'this team', 'we'), ('us',), True),
    ("^(?:we(?:'re| are)|i'm|i am)\\s+(?:moving|switching|migrating|standardi[sz]ing)\\s+(?:over\\s+)?(?:to|on)\\s+(.+?)(?:(?:\\s+and|,)\\s+(?:dropping|ditching|replacing|abandoning|leaving|retiring|no more)\\s+(.+?))?(?:\\s+in new code)?$", 18):
        (('i am', "i'm", 'we are', "we're"), ('migrating', 'moving', 'standardi', 'switching'), True),
    ("^(?:we(?:'re| are|'ll| will)?|i(?:'ll| will)?)\\s+(?:go|going)\\s+with\\s+(.+)$", 18):
        (('i', 'we'), ('with',), True),
    ("^(?:we|i)(?:'ve| have)?\\s+(?:decided|agreed|settled)\\s+(?:(to|on|that)\\s+)(.+)$|^(?:the\\s+)?decision(?:\\s+is)?\\s*[:\\u2014\\u2013-]\\s*(?:to\\s+)?(.+)$", 18):
        (('decision', 'i', 'the', 'we'), ('agreed', 'decided', 'decision', 'settled'), True),
    ("^(i|we)(?:'d| would)?\\s+(?:really\\s+|strongly\\s+|much\\s+|generally\\s+|usually\\s+)?prefer\\s+(.+)$|^(my|our) preference is(?: to)?\\s+(.+)$", 18):
        (('i', 'my preferenc', 'our preferen', 'we'), ('prefer',), True),
    ("^(i|we)(?:'d| would)\\s+(?:much\\s+)?rather\\s+(?:(?:you|we)\\s+)?(not\\s+)?(.+?)(?:\\s+than\\s+(.+))?$", 18):
        (('i would', "i'd", 'we would', "we'd"), ('rather',), True),
    ("^i\\s+(?:have\\s+|'ve\\s+|just\\s+|already\\s+)*(deleted|removed|renamed|moved)\\s+(?:the\\s+)?([\\w.-]*\\w\\.\\w{1,8}|[\\w.-]+/[\\w./-]*)(?=$|[\\s,;])(.*)$", 18):
        (('i',), ('deleted', 'moved', 'renamed'), True),
    ("^there\\s+(?:will\\s+be\\s+no|won't\\s+be\\s+any|will\\s+not\\s+be\\s+any|is\\s+going\\s+to\\s+be\\s+no|should\\s+be\\s+no|must\\s+be\\s+no)\\s+([^;]{4,100}?)$", 18):
        (('there',), ('there',), True),
    ('(?:(?<![\\w<])[a-z]:[\\\\/]|(?<![\\w.<>-])(?:~|\\.{1,2})?[\\\\/])[\\w.@%+=~-]+(?:[\\\\/][\\w.@%+=~-]*)*(?::\\d+){0,2}|(?<![\\w<>/\\\\.-])[\\w.@+-]+(?:[\\\\/][\\w.@+-]+)+[\\\\/]?(?::\\d+){0,2}|(?<![\\w<>/\\\\.-])[\\w-]+(?:\\.[\\w-]+)*\\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|rs|go|rb|java|kt|c|cc|cpp|h|hpp|cs|php|swift|scala|sh|json|ya?ml|toml|ini|cfg|md|txt|log|html|css|scss|vue|svelte|sql|lock|xml|csv|ipynb|so|dll|o|a|class|jar|whl|tar|gz|zip|env)\\b(?::\\d+){0,2}', 2):
        (None, ('.', '/', ':', '\\')),
    ('(?:[{};]\\s*$|=>|\\(\\);|\\)\\s*\\{|^\\s*[}\\])]|^\\s*#\\s*\\w+\\s*=|^\\s*\\w+\\s*=\\s*\\S+;?$)', 0):
        (None, ('#', ')', ';', '=', ']', '{', '}')),
    ('(?:^|\\n)[ \\t]*(```|~~~)[^\\n]*\\n.*?(?:\\n[ \\t]*\\1[^\\n]*(?=\\n|$)|$)', 16):
        (('\t', '\n\t', '\n ', '\n```', '\n~~~', ' ', '```', '~~~'), ('```', '~~~')),
    ('(?<![\\w-])(CLAUDE|AGENTS|GEMINI)\\.md\\b', 2):
        (('agents.md', 'claude.md', 'gemini.md'), ('agents', 'claude', 'gemini')),
    ('(?i)\\bcould not (?:find|resolve|connect|open|load)\\b', 0):
        (('could not co', 'could not fi', 'could not lo', 'could not op', 'could not re'), ('could not ',)),
    ('(?i)\\bexit(?:ed|ing) with (?:code|status) [1-9]|\\breturned non-zero exit status\\b|\\bnon-zero exit\\b', 0):
        (('exited with ', 'exiting with', 'non-zero exi', 'returned non'), (' with ', 'non-zero exit')),
    ('(?i)\\bunable to (?:find|resolve|connect|open|locate|access)\\b', 0):
        (('unable to ac', 'unable to co', 'unable to fi', 'unable to lo', 'unable to op', 'unable to re'), ('unable to ',)),
    ('<([A-Za-z][\\w-]*)(?:\\s[^>]*)?>.*?</\\1\\s*>', 16):
        (('<',), ('</',)),
    ('</?tool_use_error>', 0):
        (('</', '<tool_use_er'), ('tool_use_error>',)),
    ('A complete log of this run|Log files were not written|For a full report see|^npm (?:ERR!|error)\\s*$|^\\S+:\\d+: \\w+$|^-+ generated xml|^=+ warnings summary', 0):
        (None, (' generated xml', ' warnings summary', ': ', 'a complete log of this run', 'for a full report see', 'log files were not written', 'npm ')),
    ('\\*\\*(?=\\S)|(?<=\\S)\\*\\*', 0):
        (('**',), ('**',)),
    ('\\b(?:always|never)\\b', 2):
        (('always', 'never'), ('always', 'never')),
    ('\\b(?:apply|make|rewrite|sharpen|update|edit|restructure|condense|clean up|keep|refactor|trim|shorten|tidy|reorgani[sz]e)\\b', 2):
        (('apply', 'clean up', 'condense', 'edit', 'keep', 'make', 'refactor', 'reorganise', 'reorganize', 'restructure', 'rewrite', 'sharpen', 'shorten', 'tidy', 'trim', 'update'), ('apply', 'clean up', 'condense', 'edit', 'keep', 'make', 'refactor', 'reorgani', 'restructure', 'rewrite', 'sharpen', 'shorten', 'tidy', 'trim', 'update')),
    ('\\b(?:decision|decided|decide|settle[ds]?|verdict|choice|final call|ruling)\\b', 2):
        (('choice', 'decide', 'decision', 'final call', 'ruling', 'settle', 'verdict'), ('choice', 'decide', 'decision', 'final call', 'ruling', 'settle', 'verdict')),
    ('\\b(?:for now|right now|this time|for the moment|temporarily|just this once|for this (?:one|task|pr|commit|change|file|test|run)|today|yet|in this (?:function|file|test)|until)\\b', 2):
        (('for now', 'for the mome', 'for this cha', 'for this com', 'for this fil', 'for this one', 'for this pr', 'for this run', 'for this tas', 'for this tes', 'in this file', 'in this func', 'in this test', 'just this on', 'right now', 'temporarily', 'this time', 'today', 'until', 'yet'), ('for now', 'for the moment', 'for this ', 'in this ', 'just this once', 'right now', 'temporarily', 'this time', 'today', 'until', 'yet')),
    ('\\b(?:for|in|on)\\s+(?:every|all|each|any)\\s+(.{2,40}?)\\s*(?:(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|in (?:the )?future|for future (?:work|changes|sessions)|for good))?$', 2):
        (('for', 'in', 'on'), ('all', 'any', 'each', 'every')),
    ('\\b(?:here|there|now|for now|for this|in this (?:function|file|method|test|case|pr|branch)|while|until|during|this time)\\b[.!]?$|\\b(?:while|until|during)\\b', 2):
        (('during', 'for now', 'for this', 'here', 'in this bran', 'in this case', 'in this file', 'in this func', 'in this meth', 'in this pr', 'in this test', 'now', 'there', 'this time', 'until', 'while'), ('during', 'for this', 'here', 'in this ', 'now', 'this time', 'until', 'while')),
    ('\\b(?:here|there|this|that|these|those|it|now)\\b', 2):
        (('here', 'it', 'now', 'that', 'there', 'these', 'this', 'those'), ('here', 'it', 'now', 'that', 'these', 'this', 'those')),
    ('\\b(?:make|get) (?:it|this|that|things) (?:better|nicer|cleaner|good|great|faster|work|right|prettier)\\b|\\bimprove (?:it|this|that|things)\\b(?!\\s+by)', 2):
        (('get it b', 'get it c', 'get it f', 'get it g', 'get it n', 'get it p', 'get it r', 'get it w', 'get that', 'get thin', 'get this', 'improve ', 'make it ', 'make tha', 'make thi'), ('better', 'cleaner', 'faster', 'good', 'great', 'improve ', 'nicer', 'prettier', 'right', 'work')),
    ('\\b(?:rewrit|chang|switch|convert|port|mov|migrat|replac)\\w*\\s+(?:this|it|that|them|these)\\s+(?:to|with|so it uses)\\s+(?:use\\s+)?(.{3,60}?)[?.!]*$', 2):
        (('chang', 'convert', 'migrat', 'mov', 'port', 'replac', 'rewrit', 'switch'), ('chang', 'convert', 'migrat', 'mov', 'port', 'replac', 'rewrit', 'switch')),
    ('\\b(?:rules?|conventions?|polic(?:y|ies)|style|heads[- ]up|note|reminder|remember|standards?|guidelines?|principles?|requirements?|always|never)\\b|(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|in (?:the )?future|for future (?:work|changes|sessions)|for good)', 2):
        (('always', 'convention', 'for future c', 'for future s', 'for future w', 'for good', 'from here on', 'from now on', 'going forwar', 'guideline', 'heads up', 'heads-up', 'henceforth', 'in future', 'in the ', 'moving forwa', 'never', 'note', 'policies', 'policy', 'principle', 'remember', 'reminder', 'requirement', 'rule', 'standard', 'style'), None),
    ('\\b(?:tmp|temp)[\\w-]{4,}\\b', 2):
        (('temp', 'tmp'), ('mp',)),
    ('\\b(?:would|could|might)\\b', 2):
        (('could', 'might', 'would'), ('could', 'might', 'would')),
    ('\\b(?:write|add|create|generate|run|rerun|re-run|fix)\\s+(?:(?:a|an|the|some|more|unit|integration|e2e|failing|missing)\\s+){0,3}tests?\\b|\\btest coverage\\b|\\bunit tests?\\b|\\bcoverage\\b|\\bpytest\\b|\\bjest\\b|\\bvitest\\b|\\btest suite\\b|\\bspecs?\\b', 2):
        (('add', 'coverage', 'create', 'fix', 'generate', 'jest', 'pytest', 're-run', 'rerun', 'run', 'spec', 'test coverag', 'test suite', 'unit test', 'vitest', 'write'), ('coverage', 'jest', 'spec', 'test')),
    ('\\b0x[0-9a-f]+\\b', 2):
        (('0x',), ('0x',)),
    ('\\bEACCES\\b', 0):
        (('eacces',), ('eacces',)),
    ('\\bENOENT\\b', 0):
        (('enoent',), ('enoent',)),
    ('\\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\b', 2):
        (None, ('-',)),
    ('\\b[1-9]\\d* errors?\\b(?=.*\\b(?:passed|in \\d|failed)\\b)|(?:^|\\s)ERROR(?:\\]|:)|^Error\\b', 0):
        (None, ('error',)),
    ('\\b[1-9]\\d* failed\\b|(?i:\\bcommand failed\\b|\\bfailed with exit code\\b|\\bbuild failed\\b|\\bcompilation failed\\b|\\bfailed to (?:compile|build|start|connect|load|install|resolve)\\b)', 0):
        (None, (' failed', 'failed to ', 'failed with exit code')),
    ('\\b[a-z][a-z0-9+.-]{1,15}://[^\\s\'\\"<>]+', 2):
        (None, ('://',)),
    ('\\b\\d{1,3}(?:\\.\\d{1,3}){3}\\b', 0):
        (None, ('.',)),
    ('\\b\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{1,2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?\\b|\\b\\d{1,2}:\\d{2}:\\d{2}(?:[.,]\\d+)?(?:Z|[+-]\\d{2}:?\\d{2})?\\b', 2):
        (None, ('-', ':')),
    ('\\badd\\b|\\bcreate\\b|\\bimplement\\w*|\\bbuild\\b|\\bwrite\\b|\\bgenerate\\b|\\bscaffold\\b|\\bset ?up\\b|\\bnew (?:feature|endpoint|page|component|command)\\b|\\bsupport for\\b|\\bmake (?:a|an|the|new)\\b|\\bintegrate\\b', 2):
        (('add', 'build', 'create', 'generate', 'implement', 'integrate', 'make a', 'make new', 'make the', 'new command', 'new componen', 'new endpoint', 'new feature', 'new page', 'scaffold', 'set ', 'setup', 'support for', 'write'), ('add', 'build', 'create', 'generate', 'implement', 'integrate', 'make ', 'new ', 'scaffold', 'set', 'support for', 'write')),
    ('\\bconcise\\b', 2):
        (('concise',), ('concise',)),
    ('\\berror TS\\d+:', 0):
        (('error ts',), ('error ts',)),
    ('\\betc\\b\\.?|\\band so on\\b|\\band so forth\\b|\\bor whatever\\b|\\bstuff like that\\b|\\band stuff\\b', 2):
        (('and so forth', 'and so on', 'and stuff', 'etc', 'or whatever', 'stuff like t'), ('and so forth', 'and so on', 'and stuff', 'etc', 'or whatever', 'stuff like that')),
    ('\\bfix (?:it|this|that|things|everything|stuff)\\b', 2):
        (('fix everythi', 'fix it', 'fix stuff', 'fix that', 'fix things', 'fix this'), ('fix ',)),
    ('\\bnon-?repetitive\\b|\\bwithout repetition\\b', 2):
        (('non-', 'nonrepetitiv', 'without repe'), ('repetitive', 'without repetition')),
    ('\\brefactor\\w*|\\bclean(?:\\s|-)?up\\b|\\brestructur\\w+|\\brename\\b|\\bsimplif\\w+|\\breorgani[sz]\\w+|\\bextract\\b|\\btidy\\b|\\bdeduplicate\\b|\\bdry up\\b|\\bmodulari[sz]e\\b', 2):
        (('clean', 'deduplicate', 'dry up', 'extract', 'modularise', 'modularize', 'refactor', 'rename', 'reorganis', 'reorganiz', 'restructur', 'simplif', 'tidy'), ('clean', 'deduplicate', 'dry up', 'extract', 'modulari', 'refactor', 'rename', 'reorgani', 'restructur', 'simplif', 'tidy')),
    ('\\breview\\b|\\blook over\\b|\\bcode review\\b|\\baudit\\b|\\bcritique\\b|\\bfeedback on\\b|\\bcheck (?:my|this|the) (?:code|pr|diff|changes|implementation)\\b|\\bsanity[- ]check\\b', 2):
        (('audit', 'check my cha', 'check my cod', 'check my dif', 'check my imp', 'check my pr', 'check the ch', 'check the co', 'check the di', 'check the im', 'check the pr', 'check this c', 'check this d', 'check this i', 'check this p', 'code review', 'critique', 'feedback on', 'look over', 'review', 'sanity check', 'sanity-check'), ('audit', 'check ', 'critique', 'feedback on', 'look over', 'review', 'sanity')),
    ('\\bsomehow\\b', 2):
        (('somehow',), ('somehow',)),
    ('\\bsomething\\b|\\bsome kind of\\b|\\bsomewhere\\b', 2):
        (('some kind of', 'something', 'somewhere'), (' kind of', 'thing', 'where')),
    ('\\bsu[cs]{1,3}in?c?t\\b', 2):
        (('suc', 'sus'), ('su',)),
    ('\\buse\\s+([\\w.@/+-]+(?:\\s+[\\w.@/+-]+)?)(?:\\s+\\([^)]{0,80}\\))?\\s+as\\s+(?:the|our|its)\\s+((?:standard(?:ized|ised)?|default|main|preferred|canonical|only)\\s+(?:[\\w-]+\\s+)?(?:framework|library|runner|tool|formatter|linter|bundler|package manager|database|language|build tool|test runner|client|server|orm))\\b', 18):
        (('use',), ('canonical', 'default', 'main', 'only', 'preferred', 'standard')),
    ('\\s*(?:,\\s*|\\s)(?:but|otherwise|and then|so that|except)\\b.*$|\\s*[;(].*$', 18):
        (None, ('(', ';', 'and then', 'but', 'except', 'otherwise', 'so that')),
    ('\\s*\\([^()]*\\)', 0):
        (None, ('(',)),
    ('\\s*\\b(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|in (?:the )?future|for future (?:work|changes|sessions)|for good)\\b', 2):
        (None, ('for good', 'from here on', 'from now on', 'future', 'going forward', 'henceforth', 'moving forward')),
    ('\\s+(?:for|in|across)\\s+(?:this|the|our)\\s+(?:repo|repository|project|codebase|app|team)\\s*$', 2):
        (None, ('our', 'the', 'this')),
    ('\\s+(?:that|which|who)\\s+[^,;]*$', 0):
        (None, ('that', 'which', 'who')),
    ('^((?:the\\s+|our\\s+)?[a-z][\\w.+-]*(?:(?:\\s*,\\s*|\\s+and\\s+|\\s+)[a-z][\\w.+-]*){0,3}?)\\s+(?:(?:is|are)\\s+(?:running|hosted|listening|served|up)|runs?|lives?)\\s+(?:on|at)\\s+(\\d{1,3}(?:\\.\\d{1,3}){3}(?::\\d{2,5})?|localhost(?::\\d{2,5})?|port\\s+\\d{2,5}|[a-z0-9-]+(?:\\.[a-z0-9-]+)+:\\d{2,5})$', 2):
        (None, ('at', 'on')),
    ('^((?:the|our|this|all|every)\\s+[^,;]{2,40}?)\\s+(?:must|should|needs? to|has to|have to)\\s+(?:stay|remain)\\s+([^,;]{2,60})$', 18):
        (('all', 'every', 'our', 'the', 'this'), ('remain', 'stay'), True),
    ('^(.+?)[\\s,;\\u2014\\u2013-]+(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|in (?:the )?future|for future (?:work|changes|sessions)|for good)\\s*$', 18):
        (None, ('for good', 'from here on', 'from now on', 'future', 'going forward', 'henceforth', 'moving forward')),
    ('^(.+?)\\s+(?:over|rather than|instead of|more than|to)\\s+(.+)$', 18):
        (None, ('instead of', 'more than', 'over', 'rather than', 'to')),
    ('^(?:(?:in this (?:repo|repository|project|codebase|code base|team)|here|in general|generally),?\\s+)?(?:(?:you|we)\\s+(?:should|must|need to|have to|gotta)\\s+|(?:make sure|be sure|remember)\\s+(?:to|that you|you|that we|we)\\s+|we\\s+|please\\s+)?(always|never)\\s+(.+)$', 18):
        (('always', 'be sure', 'generally', 'here', 'in general', 'in this code', 'in this proj', 'in this repo', 'in this team', 'make sure', 'never', 'please', 'remember', 'we', 'you'), ('always', 'never'), True),
    ('^(?:(?:ok(?:ay)?|so|and|also|oh|hey|btw|by the way|alright|well|one more thing|ugh|argh|sigh|uh|um|whoa|oof|note|important|fyi|reminder|pls|please|just|and also|oh and|general rule|rule|as a rule|in general)\\b[\\s,:!.\\u2014\\u2013-]*)+', 2):
        (('alright', 'also', 'and', 'argh', 'as a rule', 'btw', 'by the way', 'fyi', 'general rule', 'hey', 'important', 'in general', 'just', 'note', 'oh', 'ok', 'one more thi', 'oof', 'please', 'pls', 'reminder', 'rule', 'sigh', 'so', 'ugh', 'uh', 'um', 'well', 'whoa'), None, True),
    ('^(?:(?:yes|yeah|yep|ok(?:ay)?|sure|fine|great|good|alright|perfect|cool)(?:\\s+please)?\\s*[,.!]\\s*)+(?:and\\s+|then\\s+|so\\s+)?(?=\\S)', 2):
        (('alright', 'cool', 'fine', 'good', 'great', 'ok', 'perfect', 'sure', 'yeah', 'yep', 'yes'), ('alright', 'cool', 'fine', 'good', 'great', 'ok', 'perfect', 'sure', 'yeah', 'yep', 'yes'), True),
    ('^(?:/\\S+.*|y|n|yes|no|ok|okay|sure|continue|go ahead|go on|proceed|thanks|thank you|commit|push|lgtm|stop|undo|retry|done|next)[\\s.!]*$', 2):
        (('/', 'commit', 'continue', 'done', 'go ahead', 'go on', 'lgtm', 'n', 'ok', 'proceed', 'push', 'retry', 'stop', 'sure', 'thank you', 'thanks', 'undo', 'y'), ('/', 'commit', 'go ahead', 'lgtm', 'n', 'ok', 'proceed', 'push', 'stop', 'sure', 'y'), True),
    ('^(?:E\\s+)?(?:[A-Za-z_][\\w]*\\.)*[A-Z]\\w*(?:Error|Exception)\\s*$', 0):
        (None, ('rror', 'xception')),
    ('^(?:E\\s+|Uncaught\\s+|Unhandled\\s+|\\w+\\s+)?(?:[A-Za-z_][\\w]*\\.)*[A-Z]\\w*(?:Error|Exception|Exit|Failure|Fault|Interrupt|NotFound|Refused)\\b(?:\\s*\\[[^\\]]*\\])?(?::\\s*\\S.*|\\s*$)', 0):
        (None, ('error', 'exception', 'exit', 'failure', 'fault', 'interrupt', 'notfound', 'refused')),
    ('^(?:FAILED|ERROR) \\S+ - \\S', 0):
        (('error ', 'failed '), ('error', 'failed'), True),
    ('^(?:[\\w@./-]+\\s+){1,5}?to\\s+NOT\\s+(.+)$', 16):
        (None, ('not',)),
    ('^(?:[^,]{0,40}?\\b(?:so|and|then)\\s+)?we\\s+should\\s+(\\w+\\s[^;]{2,100}?\\s(?:rather than|instead of)\\s+[^,;]{2,60})$', 18):
        (None, ('instead of', 'rather than')),
    ('^(?:\\d*>&\\d+|(?:\\d*>>?|&>>?|<)(\\S*))$', 0):
        (None, ('<', '>')),
    ('^(?:before|after|when(?:ever)?)\\s+\\w', 2):
        (('after', 'before', 'when'), ('after', 'before', 'when'), True),
    ('^(?:for\\s+([^,]{2,40}?),?\\s+)?i\\s+(?:always\\s+)?want\\s+([^,;]+?),\\s*not\\s+([^,;]+)$', 18):
        (('for', 'i'), ('want',), True),
    ('^(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|in (?:the )?future|for future (?:work|changes|sessions)|for good)\\b[\\s,:;\\u2014\\u2013-]*(.+)$', 18):
        (('for future c', 'for future s', 'for future w', 'for good', 'from here on', 'from now on', 'going forwar', 'henceforth', 'in future', 'in the ', 'moving forwa'), ('for good', 'from here on', 'from now on', 'future', 'going forward', 'henceforth', 'moving forward'), True),
    ('^(?:hint|note|help|tip|suggestion)\\s*:|^\\(use \\"|^[\\w.~-]*/[\\w./~-]*/?$', 2):
        (None, ('(use "', '/', 'help', 'hint', 'note', 'suggestion', 'tip')),
    ('^(?:in (?:this|our|the) [\\w ]{2,30}?,?\\s+)?(?:the\\s+|our\\s+|all\\s+|every\\s+)?[\\w./#<>-]+(?:\\s+[\\w./#<>-]+){0,6}\\s+(?:(?:must|should|shall|need|needs|has|have|are|is|go|goes|get|gets|live|lives|stay|stays)\\b|(?:always|never)\\s+\\w)', 2):
        (None, ('always', 'are', 'get', 'go', 'has', 'have', 'is', 'live', 'must', 'need', 'never', 'shall', 'should', 'stay')),
    ('^(?:it|this|that|they|these|those|everything|all)\\s+(?:should|must|needs? to|has to|have to|ought to)\\s+be\\s+([^,;]+?),\\s*(?:and\\s+)?not\\s+([^,;]+)$', 18):
        (('all', 'everything', 'it', 'that', 'these', 'they', 'this', 'those'), ('has to', 'have to', 'must', 'need', 'ought to', 'should'), True),
    ('^(?:i|we)\\s+keep\\s+(?:getting|hitting|seeing|running into)\\s+(.{0,40}?\\b(?:errors?|failures?|warnings?|exceptions?|crash(?:es)?|timeouts?|panics?))\\s+(?:when|whenever)\\s+(.{5,}?)(?:\\s*[\\u2014\\u2013-]+\\s*(?:how|what|why|can|could|is there)\\b.*)?[?.!]*$', 18):
        (('i', 'we'), ('getting', 'hitting', 'running into', 'seeing'), True),
    ('^(?:please\\s+)?(?:remember|make sure|be sure)\\s+to\\s+(.+?\\s(?:when|whenever|every time|each time|before|after)\\s.+)$', 18):
        (('be sure', 'make sure', 'please', 'remember'), ('be sure', 'make sure', 'remember'), True),
    ('^(?:please\\s+)?(use|pick|choose)\\s+([^,;]+?)\\s+(?:instead of|rather than)\\s+([^,;]+?)$', 18):
        (('choose', 'pick', 'please', 'use'), ('instead of', 'rather than'), True),
    ('^(?:please\\s+)?avoid\\s+(.+)$', 18):
        (('avoid', 'please'), ('avoid',), True),
    ('^(?:please\\s+)?prefer\\s+(.+\\s(?:over|rather than|instead of)\\s.+)$', 18):
        (('please', 'prefer'), ('prefer',), True),
    ('^(?:please\\s+)?run\\s+(`?)([a-z][\\w.-]*(?:\\s+[\\w.:/=-]+){0,4}?)\\1\\s+to\\s+(see|find|get|list|show|view|look up)\\s+(.{4,80})$', 18):
        (('please', 'run'), ('run',), True),
    ('^(?:please\\s+|(?:can|could|would|will)\\s+you\\s+(?:please\\s+)?)?stop\\s+(\\w+ing)\\b(.*?)\\??$', 18):
        (('can', 'could', 'please', 'stop', 'will', 'would'), ('stop',), True),
    ('^(?:the|our)\\s+(.{2,50}?)\\s+(?:is|are|was|were|has been|have been)\\s+already\\s+(done|fixed|implemented|merged|finished|complete|completed|in place|upgraded|migrated|deployed|installed)$', 18):
        (('our', 'the'), ('already',), True),
    ('^(?:the|our|this|my)\\s+(?:same|good|momentum|pace|conversation)\\b|\\b(?:going|in mind|in sync|track|an eye|up|trying)\\b', 2):
        (('an eye', 'going', 'in mind', 'in sync', 'my', 'our', 'the', 'this', 'track', 'trying', 'up'), ('an eye', 'conversation', 'going', 'good', 'in mind', 'in sync', 'momentum', 'pace', 'same', 'track', 'trying', 'up')),
    ('^(?:whenever|every time|each time|any ?time)\\s+(you|we)\\s+([^,]{2,80}),\\s*(?:please\\s+)?(?:(always)\\s+|(never)\\s+)?(.+)$', 18):
        (('any ', 'anytime', 'each time', 'every time', 'whenever'), ('time', 'whenever'), True),
    ('^(During handling of the above exception|The above exception was the direct)', 0):
        (('during handl', 'the above ex'), ('during handling of the above exception', 'the above exception was the direct'), True),
    ('^(Use|Prefer|Keep|Go with|Stick with|Choose|Pick)\\s+(.+?)(?<![,\\s])\\s+not\\s+(?!(?:be|to|just|only|the\\s+other)\\b)(.+)$', 16):
        (('choose', 'go with', 'keep', 'pick', 'prefer', 'stick with', 'use'), ('not',), True),
    ('^([^:\\u2014\\u2013\ue000]{2,60}?)\\s*:\\s+(.+)$', 16):
        (None, (':',)),
    ('^(before|after)\\s+([^,]{2,60}),\\s*(?:please\\s+)?(?:you\\s+should\\s+)?(always|never)\\s+(.+)$', 18):
        (('after', 'before'), ('after', 'before'), True),
    ('^(use|prefer|pick|choose)\\s+([^,;]+?),\\s*not\\s+([^,;]+)$', 18):
        (('choose', 'pick', 'prefer', 'use'), ('not',), True),
    ('^CRITICAL\\b|(?:^|\\s)CRITICAL(?:\\]|:)', 0):
        (None, ('critical',)),
    ('^ERROR\\b(?! *$)|::\\S+ ERROR\\b|^\\[ERROR\\]|\\b(?:AssertionError|ModuleNotFoundError|ImportError|SyntaxError)\\b', 0):
        (('::', '[error]', 'assertionerr', 'error', 'importerror', 'modulenotfou', 'syntaxerror'), ('error',)),
    ('^FAILED\\b|::\\S+ FAILED\\b|\\btest result: FAILED\\b|\\bBUILD FAILED\\b', 0):
        (('::', 'build failed', 'failed', 'test result:'), ('failed',)),
    ('^FAIL\\s+\\S|^FAILURE:', 0):
        (('fail',), ('fail',), True),
    ('^FATAL\\b|(?:^|\\s)FATAL(?:\\]|:)', 0):
        (None, ('fatal',)),
    ('^Killed$', 0):
        (('killed',), ('killed',), True),
    ('^[A-Za-z_][A-Za-z0-9_]*=', 0):
        (None, ('=',)),
    ('^[\\w-]*-[\\w-]+$|^\\w+(?:able|ible|ive|agnostic|compatible|friendly|safe|proof|native|less)$', 2):
        (None, ('-', 'able', 'agnostic', 'friendly', 'ible', 'ive', 'less', 'proof', 'safe')),
    ('^\\S+:(?: [^:\\s]+:){0,3} not found$', 0):
        (None, (' not found',)),
    ('^\\s*(?:Error: )?Exit code (-?\\d+)\\s*$', 0):
        (None, ('exit code ',)),
    ('^\\s*(?:[\\w./\\\\~@+-]+:(?:\\d+:){0,2}\\s*)?(?:\\w[\\w-]*:\\s+)?(?:fatal error|error|fatal|panic|critical)(?:\\[[\\w-]+\\])?\\s*(?::|!)\\s*\\S', 2):
        (None, ('critical', 'error', 'fatal', 'panic')),
    ('^\\s*(?:at |File \\"|\\^+\\s*$|~+\\s*$|-+\\s*$|=+\\s*$|\\d+ \\|)', 0):
        (None, (' |', '-', '=', '^', 'at ', 'file "', '~')),
    ('^\\s*Traceback \\(most recent call last\\):', 0):
        (None, ('traceback (most recent call last):',)),
    ('^i\\s+(?:really\\s+)?(?:like|love)\\s+to\\s+(.+)$', 18):
        (('i',), ('ike', 'ove'), True),
    ('^i\\s+(?:really\\s+)?(?:like|prefer)\\s+(.+?)\\s+(?:better|more)\\s+than\\s+([^,;]+)', 18):
        (('i',), ('than',), True),
    ('^i\\s+(always|never)\\s+(.+)$', 18):
        (('i',), ('always', 'never'), True),
    ('^in (?:this|our|the) (?:repo|repository|project|codebase|code base|team|service|app)\\b', 2):
        (('in our app', 'in our code ', 'in our codeb', 'in our proje', 'in our repo', 'in our servi', 'in our team', 'in the app', 'in the code ', 'in the codeb', 'in the proje', 'in the repo', 'in the servi', 'in the team', 'in this app', 'in this code', 'in this proj', 'in this repo', 'in this serv', 'in this team'), ('in ',), True),
    ('^in this (?:repo|repository|project|codebase|team),?\\s+we\\s+(?:always\\s+)?use\\s+([^,;]{2,60})$|^we\\s+(?:always\\s+)?use\\s+([^,;]{2,60}?)\\s+(?:in|for|throughout)\\s+this\\s+(?:repo|repository|project|codebase)$', 18):
        (('in this code', 'in this proj', 'in this repo', 'in this team', 'we'), ('this',), True),
    ('^keep\\s+((?:the|our|this|these|all|every|my)\\s+[^,;:\\u2014\\u2013-]{2,60}?)\\s*(?:(?:\\s-|[,;:\\u2014\\u2013])\\s*(.{0,100}))?$', 2):
        (('keep',), ('keep',), True),
    ('^make(?:\\[\\d+\\])?: \\*\\*\\*', 0):
        (('make: ***', 'make['), (': ***',), True),
    ('^no\\s+(.{2,50}?)\\s+(?:is\\s+|are\\s+)?(?:needed|required|necessary)$', 18):
        (('no',), ('necessary', 'needed', 'required'), True),
    ('^npm ERR! (?!\\s*$)', 0):
        (('npm err! ',), ('npm err! ',), True),
    ('^npm error \\S', 0):
        (('npm error ',), ('npm error ',), True),
    ('^you\\s+(?:just\\s+|really\\s+)?(deleted|removed|wiped|erased|overwrote|nuked|dropped)\\s+(?:all\\s+)?(?:my|our)\\s+([^\\s?!.,]+(?:\\s[^\\s?!.,]+)?)\\s*[?!.]*$', 2):
        (('you',), ('deleted', 'dropped', 'erased', 'nuked', 'overwrote', 'removed', 'wiped'), True),
}
