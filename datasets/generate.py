"""Write the project's companion conversations (``companion_en``, ``companion_zh``).

Seeded and deterministic: ``python datasets/generate.py`` rewrites both directories with the
same bytes. Each conversation is a user talking with the companion "Holo" over 16 dated
sessions; facts are planted in the user's turns and the probes name the turns that hold
them. Every sentence here was written for this project.

Probe categories: ``single_fact``; ``multi_hop`` (a person's name in one turn, what they do
or where they live in another that uses only the name); ``temporal`` (when something
happened, or what happened on a given day); ``preference_update`` (a preference stated
early and changed later: the newer turn is the evidence, the older one ``stale``);
``adversarial`` (a question whose premise the conversation never states; the evidence is
the turn a careless memory would answer from).
"""

# ruff: noqa: E501  (the sentence banks read best one item a line)

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hologram.eval.dataset import Conversation, Probe, Session, Turn, write_project

HERE = Path(__file__).resolve().parent
SESSIONS = 16
TURN_GAP_S = 40.0

# fmt: off
EN = {
    "user": "Maya",
    "tz": timezone(timedelta(hours=1)),
    "start": datetime(2024, 2, 5, 19, 30),
    "people": [
        # role, name, statement of the name, city clause, job clause, question words
        ("sister", "Lena", "My sister is called Lena, she's two years older than me.", "Porto", "an architect"),
        ("brother", "Tomas", "My little brother's name is Tomas.", "Leeds", "a paramedic"),
        ("best friend", "Priya", "Priya has been my best friend since primary school.", "Dublin", "a data journalist"),
        ("neighbour", "Mr Okafor", "Our neighbour, Mr Okafor, waters my plants when I'm away.", "Brighton", "a retired pilot"),
        ("manager", "Helen", "My manager at work is a woman called Helen.", "Bristol", "a product director"),
        ("cousin", "Rafael", "I have a cousin, Rafael, on my dad's side.", "Valencia", "a marine biologist"),
        ("flatmate", "Jonah", "I share the flat with a guy called Jonah.", "Glasgow", "a sound engineer"),
        ("piano teacher", "Mrs Lindqvist", "My piano teacher is Mrs Lindqvist.", "Uppsala", "a concert organist"),
    ],
    "moves": "{name} told me last week that they're moving to {city}.",
    "jobs": "{name} has started working as {job}, which still surprises me.",
    "q_name": "What is the name of my {role}?",
    "q_city": "Which city is my {role} moving to?",
    "q_job": "What does my {role} do for a living?",
    "q_city_name": "Where is {name} moving to?",
    "q_job_name": "What does {name} work as?",
    "q_who_city": "Who among the people I know is moving to {city}?",
    "q_who_job": "Which of the people I know works as {job}?",
    "facts": [
        ("I'm allergic to peanuts, so I always check labels.", "What food am I allergic to?", "peanuts"),
        ("I drive an old green Volvo estate.", "What car do I drive?", "a green Volvo estate"),
        ("My birthday is on the ninth of October.", "When is my birthday?", "9 October"),
        ("I play the cello in an amateur orchestra on Thursdays.", "Which instrument do I play?", "the cello"),
        ("My cat is a grey British shorthair called Pepper.", "What is my cat called?", "Pepper"),
        ("I work as a pharmacist at the hospital on Elm Road.", "What is my job?", "pharmacist"),
        ("I live on the fourth floor, and the lift is always broken.", "Which floor do I live on?", "the fourth"),
        ("I grew up in a small town near Aberdeen.", "Where did I grow up?", "near Aberdeen"),
        ("My shoe size is 39, which makes hiking boots hard to find.", "What is my shoe size?", "39"),
        ("I'm learning Portuguese on my phone every evening.", "Which language am I learning?", "Portuguese"),
        ("I can't stand horror films, they give me nightmares.", "What kind of film do I avoid?", "horror"),
        ("I take the number 12 bus to work.", "Which bus do I take to work?", "the 12"),
        ("My favourite book is a battered copy of Middlemarch.", "What is my favourite book?", "Middlemarch"),
        ("I'm saving up for a trip to Japan next spring.", "What am I saving up for?", "a trip to Japan"),
        ("I broke my wrist skiing when I was fifteen.", "How did I break my wrist?", "skiing"),
        ("My blood type is O negative, so I donate often.", "What is my blood type?", "O negative"),
        ("I volunteer at the food bank every other Saturday.", "Where do I volunteer?", "the food bank"),
        ("I keep a sourdough starter named Gerald in the fridge.", "What is my sourdough starter called?", "Gerald"),
        ("My grandmother taught me to knit socks.", "Who taught me to knit?", "my grandmother"),
        ("I'm scared of wasps since one stung me on the eyelid.", "Which insect am I afraid of?", "wasps"),
        ("My first concert was a Björk show in 2008.", "What was my first concert?", "Björk in 2008"),
        ("I studied chemistry at Edinburgh.", "What did I study at university?", "chemistry"),
        ("My favourite board game is Carcassonne.", "Which board game do I like best?", "Carcassonne"),
        ("I have a tattoo of a fern on my ankle.", "What tattoo do I have?", "a fern"),
        ("I sleep badly when the moon is full, or so I claim.", "When do I say I sleep badly?", "at full moon"),
        ("My phone's lock screen is a photo of Loch Ness.", "What is on my lock screen?", "Loch Ness"),
        ("I ran my first half marathon in two hours and six minutes.", "What was my half marathon time?", "2:06"),
        ("I'm lactose intolerant, oat milk only for me.", "Which milk do I drink?", "oat milk"),
        ("I collect old postcards of lighthouses.", "What do I collect?", "lighthouse postcards"),
        ("My dentist is Dr Achebe on Market Street.", "Who is my dentist?", "Dr Achebe"),
    ],
    "changes": [
        ("I start every day with a double espresso.", "I've given up coffee, it's green tea in the mornings now.", "What do I drink in the morning these days?", "green tea"),
        ("I go running at six in the morning before work.", "I've moved my runs to the evening, after work.", "When do I go running now?", "in the evening"),
        ("I'm a strict vegetarian.", "I've gone fully vegan since the new year resolution stuck.", "What is my diet now?", "vegan"),
        ("My favourite series at the moment is a Danish crime drama.", "I dropped the Danish crime show; I'm hooked on a baking competition now.", "Which show am I into now?", "a baking competition"),
        ("I keep my hair really long.", "I finally cut my hair short, a bob.", "How do I wear my hair now?", "short, a bob"),
        ("I read mostly science fiction.", "Lately I only read history books.", "What do I mostly read now?", "history"),
        ("I swim at the leisure centre twice a week.", "I stopped swimming and joined a climbing gym instead.", "What sport do I do now?", "climbing"),
        ("I cycle to work every day.", "Since the bike was stolen I walk to work.", "How do I get to work now?", "I walk"),
        ("My favourite restaurant is the Thai place on the corner.", "The Thai place closed, so now my favourite is the Georgian bakery.", "Which is my favourite restaurant now?", "the Georgian bakery"),
        ("I go to bed around midnight.", "I'm trying to be in bed by half past ten now.", "What time do I go to bed these days?", "half past ten"),
        ("I listen to jazz while I work.", "I switched to podcasts while working.", "What do I listen to while working now?", "podcasts"),
        ("I use an old Android phone.", "I gave in and bought an iPhone.", "What phone do I use now?", "an iPhone"),
        ("My go-to takeaway is pizza.", "These days my go-to takeaway is ramen.", "What is my usual takeaway now?", "ramen"),
        ("I'm learning to paint with watercolours.", "I put the watercolours away and took up pottery.", "What craft am I learning now?", "pottery"),
        ("I want to adopt a dog one day.", "I've changed my mind about a dog, I'd rather foster kittens.", "What kind of pet do I want now?", "fostering kittens"),
    ],
    "events": [
        ("had my dentist appointment", "Today I had my dentist appointment, just a small filling."),
        ("went to the job interview at the museum", "This afternoon I went to the job interview at the museum."),
        ("lost my keys", "I lost my keys on the way home today and had to call Jonah."),
        ("saw the northern lights", "Tonight I saw the northern lights from the hill behind the house!"),
        ("got my flu jab", "I got my flu jab at the pharmacy this morning."),
        ("baked a lemon cake for the office", "I baked a lemon cake for the office today."),
        ("went to a pottery fair", "Today I went to a pottery fair in the old market hall."),
        ("had a flat tyre", "I had a flat tyre on the motorway this morning, what a day."),
        ("watched an opera", "This evening I watched my first opera, Tosca."),
        ("helped my cousin move house", "I spent the whole day helping my cousin move house."),
        ("passed my first aid course", "I passed my first aid course today!"),
        ("planted tomatoes on the balcony", "I planted tomatoes on the balcony this afternoon."),
        ("went to a wedding", "Today I went to a wedding in a barn, lovely but freezing."),
        ("did a charity quiz", "We did a charity quiz at the pub tonight and came second."),
        ("cleaned out the attic", "I cleaned out the attic today and found my old diaries."),
        ("had a video call with my grandmother", "I had a long video call with my grandmother today."),
    ],
    "q_when": "When did I {what}?",
    "q_day": "What did I tell you happened on {day}?",
    "day": lambda d: f"{d.strftime('%A')} {d.day} {d.strftime('%B')}",
    "adversarial": [
        ("What is my sister's husband called?", "sister"),
        ("Which city is my grandfather moving to?", "cousin"),
        ("What does my dog eat?", "Pepper"),
        ("Which orchestra does my brother play in?", "cello"),
        ("What is my flatmate allergic to?", "peanuts"),
        ("When is my manager's birthday?", "birthday"),
        ("What is my neighbour's cat called?", "Pepper"),
        ("Which language is my best friend learning?", "Portuguese"),
        ("What car does my cousin drive?", "Volvo"),
        ("Who taught my sister to knit?", "knit"),
        ("Where did my piano teacher grow up?", "Aberdeen"),
        ("Which bus does Jonah take?", "bus"),
        ("What tattoo does Priya have?", "tattoo"),
        ("What did Tomas study at university?", "chemistry"),
        ("When did Helen run her half marathon?", "half marathon"),
        ("Which floor does Mr Okafor live on?", "floor"),
        ("What is Rafael saving up for?", "saving up"),
        ("Who is Lena's dentist?", "dentist is"),
        ("What was my brother's first concert?", "concert"),
        ("What board game does Jonah like?", "board game"),
    ],
    "small_user": [
        "It rained all day again.", "Work was quiet, nothing much to report.", "I'm tired but in a good way.",
        "The kettle broke this morning.", "I made soup for dinner.", "Traffic was awful.",
        "I finally finished the laundry mountain.", "The sky was pink at sunset.", "I need a holiday.",
        "My back aches from sitting all day.", "I found a nice new podcast, can't remember the name.",
        "The shop was out of bread.", "I watered the plants.", "It's windy enough to lose an umbrella.",
        "I walked past the river on the way home.", "Nothing exciting, honestly.",
    ],
    "agent_ack": [
        "Thanks for telling me, I'll remember that.", "Good to know!", "That sounds like quite a day.",
        "I've noted it.", "Oh, interesting. Tell me more whenever you like.", "Got it.",
        "That makes sense.", "I'm glad you shared that.", "Noted, thank you.", "I hear you.",
    ],
    "greet": ["Hi Holo, it's me again.", "Evening Holo!", "Hello again.", "Hey, got a minute?"],
    "agent_greet": ["Hi Maya, how have you been?", "Hello Maya! What's new?", "Good to hear from you, Maya."],
    "bye": ["Right, I'm off to bed. Night!", "Talk tomorrow.", "That's all for today."],
    "agent_bye": ["Sleep well, Maya.", "Talk soon!", "Take care, see you next time."],
}

ZH = {
    "user": "小雨",
    "tz": timezone(timedelta(hours=8)),
    "start": datetime(2024, 3, 4, 20, 0),
    "people": [
        ("姐姐", "林薇", "我姐姐叫林薇，比我大三岁。", "厦门", "建筑设计师"),
        ("弟弟", "小航", "我弟弟的名字叫小航。", "西安", "急诊科护士"),
        ("闺蜜", "阿敏", "阿敏是我从初中就认识的闺蜜。", "青岛", "数据记者"),
        ("邻居", "王阿姨", "隔壁的邻居王阿姨出差时会帮我喂猫。", "桂林", "退休的中学老师"),
        ("领导", "周总", "我们部门的领导是周总。", "苏州", "产品总监"),
        ("表哥", "陈凯", "我有个表哥叫陈凯，是舅舅家的。", "昆明", "海洋研究员"),
        ("室友", "佳佳", "我和一个叫佳佳的女生合租。", "长沙", "录音师"),
        ("古筝老师", "刘老师", "教我古筝的是刘老师。", "扬州", "民乐团演奏家"),
    ],
    "moves": "{name}上周跟我说要搬去{city}了。",
    "jobs": "{name}现在在当{job}，我到现在还觉得意外。",
    "q_name": "我{role}叫什么名字？",
    "q_city": "我{role}要搬去哪个城市？",
    "q_job": "我{role}现在做什么工作？",
    "q_city_name": "{name}要搬去哪里？",
    "q_job_name": "{name}现在做什么工作？",
    "q_who_city": "我认识的人里谁要搬去{city}？",
    "q_who_job": "我认识的人里谁在当{job}？",
    "facts": [
        ("我对芒果过敏，吃了嘴巴会肿。", "我对什么水果过敏？", "芒果"),
        ("我开一辆白色的二手比亚迪。", "我开的是什么车？", "白色二手比亚迪"),
        ("我的生日是十一月二十号。", "我的生日是哪天？", "11月20日"),
        ("我每周四晚上去少年宫学古筝。", "我在学什么乐器？", "古筝"),
        ("我家的橘猫叫馒头。", "我的猫叫什么？", "馒头"),
        ("我在一家医院的药房当药剂师。", "我是做什么工作的？", "药剂师"),
        ("我住在老小区的六楼，没有电梯。", "我住几楼？", "六楼"),
        ("我是在湖南的一个小县城长大的。", "我在哪里长大？", "湖南的小县城"),
        ("我穿三十七码的鞋。", "我穿多大码的鞋？", "37码"),
        ("我最近每天晚上在手机上学日语。", "我在学哪种外语？", "日语"),
        ("我最怕看恐怖片，看完会做噩梦。", "我不敢看哪类电影？", "恐怖片"),
        ("我每天坐地铁二号线上班。", "我坐哪条地铁线上班？", "二号线"),
        ("我最喜欢的书是《活着》，已经翻旧了。", "我最喜欢哪本书？", "《活着》"),
        ("我在攒钱，打算明年春天去新疆旅行。", "我在为什么攒钱？", "去新疆旅行"),
        ("我十五岁那年滑冰摔断过手腕。", "我的手腕是怎么断的？", "滑冰摔的"),
        ("我是O型血，经常去献血。", "我是什么血型？", "O型"),
        ("我每隔一个周六去社区食物银行做志愿者。", "我在哪里做志愿者？", "社区食物银行"),
        ("我在冰箱里养了一罐酸面种，给它取名叫老面。", "我的酸面种叫什么？", "老面"),
        ("是外婆教会我织毛衣的。", "谁教我织毛衣？", "外婆"),
        ("我被马蜂蛰过眼皮，从此特别怕马蜂。", "我怕什么虫子？", "马蜂"),
        ("我看的第一场演唱会是二零零八年的五月天。", "我看的第一场演唱会是谁的？", "五月天"),
        ("我大学读的是化学专业。", "我大学学的什么专业？", "化学"),
        ("我最喜欢的桌游是卡坦岛。", "我最喜欢哪个桌游？", "卡坦岛"),
        ("我脚踝上纹了一片银杏叶。", "我纹了什么图案？", "银杏叶"),
        ("每到月圆我就睡不好，至少我自己这么觉得。", "我说自己什么时候睡不好？", "月圆的时候"),
        ("我手机锁屏是一张洱海的照片。", "我的手机锁屏是什么？", "洱海"),
        ("我第一次跑半马用了两小时零六分。", "我第一次半马跑了多久？", "2小时06分"),
        ("我乳糖不耐受，只喝燕麦奶。", "我喝什么奶？", "燕麦奶"),
        ("我收集各地灯塔的明信片。", "我收集什么？", "灯塔明信片"),
        ("我的牙医是市口腔医院的赵医生。", "我的牙医是谁？", "赵医生"),
    ],
    "changes": [
        ("我每天早上都要喝一杯美式咖啡。", "我把咖啡戒了，现在早上改喝绿茶。", "我现在早上喝什么？", "绿茶"),
        ("我习惯早上六点起来跑步。", "我现在改成下班后晚上跑步了。", "我现在什么时候跑步？", "晚上"),
        ("我是吃素的。", "新年以后我彻底改吃纯素了，连鸡蛋也不吃。", "我现在的饮食是什么？", "纯素"),
        ("我最近在追一部悬疑剧。", "那部悬疑剧我弃了，现在迷上了一个烘焙综艺。", "我现在在看什么节目？", "烘焙综艺"),
        ("我一直留着长发。", "我终于把头发剪短了，剪成了波波头。", "我现在是什么发型？", "短发波波头"),
        ("我平时主要看科幻小说。", "最近我只看历史类的书。", "我现在主要看什么书？", "历史类的书"),
        ("我每周去游泳馆游两次泳。", "我不游泳了，办了攀岩馆的卡。", "我现在做什么运动？", "攀岩"),
        ("我每天骑车上班。", "自行车被偷了以后我改成走路上班。", "我现在怎么去上班？", "走路"),
        ("我最喜欢街角那家泰国菜。", "泰国菜馆关门了，我现在最爱楼下那家新疆馆子。", "我现在最喜欢哪家餐馆？", "新疆馆子"),
        ("我一般半夜十二点才睡。", "我现在努力十点半就上床。", "我现在几点睡觉？", "十点半"),
        ("我工作时喜欢听爵士乐。", "我现在工作时改听播客了。", "我现在工作时听什么？", "播客"),
        ("我用的是一部旧的安卓手机。", "我还是买了一部苹果手机。", "我现在用什么手机？", "苹果手机"),
        ("我最常点的外卖是披萨。", "我现在最常点的外卖是螺蛳粉。", "我现在最常点什么外卖？", "螺蛳粉"),
        ("我在学画水彩。", "水彩我先放下了，开始学做陶艺。", "我现在在学什么手艺？", "陶艺"),
        ("我以后想养一只狗。", "我不想养狗了，更想去做流浪猫的临时寄养。", "我现在想养什么宠物？", "临时寄养流浪猫"),
    ],
    "events": [
        ("去看牙医", "今天去看牙医了，补了一颗小蛀牙。"),
        ("去博物馆面试", "今天下午我去博物馆面试了。"),
        ("把钥匙弄丢", "今天回家路上把钥匙弄丢了，只好给佳佳打电话。"),
        ("看到流星雨", "今晚在楼顶看到了流星雨！"),
        ("打流感疫苗", "今天上午在社区医院打了流感疫苗。"),
        ("给同事烤柠檬蛋糕", "今天给办公室的同事烤了一个柠檬蛋糕。"),
        ("逛陶艺市集", "今天去老厂房逛了一个陶艺市集。"),
        ("车胎爆了", "今天早上在高速上车胎爆了，真是倒霉。"),
        ("第一次听歌剧", "今晚第一次去大剧院听歌剧，演的是《图兰朵》。"),
        ("帮表哥搬家", "今天一整天都在帮表哥搬家。"),
        ("考过急救证", "我今天考过了急救证！"),
        ("在阳台种番茄", "今天下午在阳台上种了几棵番茄。"),
        ("参加婚礼", "今天参加了一个草坪婚礼，很美但是好冷。"),
        ("参加公益知识竞赛", "今晚在咖啡馆参加公益知识竞赛，拿了第二名。"),
        ("收拾阁楼", "今天收拾了阁楼，翻出了小时候的日记本。"),
        ("和外婆视频", "今天和外婆视频聊了很久。"),
    ],
    "q_when": "我是哪天{what}的？",
    "q_day": "{day}那天我跟你说发生了什么？",
    "day": lambda d: f"{d.month}月{d.day}日",
    "adversarial": [
        ("我姐夫叫什么名字？", "姐姐"),
        ("我外公要搬去哪个城市？", "表哥"),
        ("我家的狗吃什么？", "馒头"),
        ("我弟弟在哪个乐团演奏？", "古筝"),
        ("我室友对什么过敏？", "过敏"),
        ("周总的生日是哪天？", "生日"),
        ("王阿姨的猫叫什么？", "馒头"),
        ("阿敏在学哪种外语？", "日语"),
        ("陈凯开什么车？", "比亚迪"),
        ("谁教我姐姐织毛衣？", "织毛衣"),
        ("刘老师在哪里长大？", "长大"),
        ("佳佳坐哪条地铁线？", "地铁"),
        ("阿敏纹了什么图案？", "纹了"),
        ("小航大学学的什么专业？", "化学"),
        ("周总第一次半马跑了多久？", "半马"),
        ("王阿姨住几楼？", "六楼"),
        ("陈凯在为什么攒钱？", "攒钱"),
        ("林薇的牙医是谁？", "牙医"),
        ("我弟弟看的第一场演唱会是谁的？", "演唱会"),
        ("佳佳最喜欢哪个桌游？", "桌游"),
    ],
    "small_user": [
        "今天又下了一整天雨。", "上班挺清闲的，没什么好说的。", "有点累，不过是好的那种累。",
        "早上烧水壶坏了。", "晚饭煮了一锅汤。", "路上堵死了。", "终于把堆成山的衣服洗完了。",
        "傍晚的天空是粉色的。", "好想放个假。", "坐了一天腰好酸。", "超市的面包卖完了。",
        "给花浇了水。", "风大得能把伞吹跑。", "下班沿着河边走回家。", "今天没什么特别的事。",
        "楼下新开了一家奶茶店。",
    ],
    "agent_ack": [
        "谢谢你告诉我，我记住了。", "好的，知道啦！", "听起来今天挺充实的。", "我记下了。",
        "哦，有意思，想聊的时候随时跟我说。", "明白。", "这样啊，说得通。", "很高兴你愿意跟我分享。",
        "收到，谢谢。", "我懂你的感受。",
    ],
    "greet": ["Holo，我又来啦。", "晚上好呀Holo！", "在吗？", "嗨，有空聊两句吗？"],
    "agent_greet": ["小雨你好，最近怎么样？", "你好呀小雨！有什么新鲜事？", "很高兴又听到你的消息。"],
    "bye": ["好了，我去睡了，晚安！", "明天再聊。", "今天就先到这儿吧。"],
    "agent_bye": ["晚安，小雨。", "下次聊！", "照顾好自己，回头见。"],
}

# fmt: on


def build(bank: dict, lang: str, seed: int) -> Conversation:
    """Plant every fact in a user turn of some session, pad with small talk, and write the
    probes that name the planted turns."""
    rng = random.Random(seed)
    # What each session must say, as (key, text); keys let probes find the turn later.
    plan: list[list[tuple[str, str]]] = [[] for _ in range(SESSIONS)]
    for i, (role, name, said, city, job) in enumerate(bank["people"]):
        plan[i % 4].append((f"name:{role}", said))
        plan[5 + i % 5].append((f"city:{role}", bank["moves"].format(name=name, city=city)))
        plan[9 + i % 6].append((f"job:{role}", bank["jobs"].format(name=name, job=job)))
    for i, fact in enumerate(bank["facts"]):
        plan[i % SESSIONS].append((f"fact:{i}", fact[0]))
    for i, (old, new, _, _) in enumerate(bank["changes"]):
        plan[i % 6].append((f"old:{i}", old))
        plan[9 + i % 7].append((f"new:{i}", new))
    for i, (_, said) in enumerate(bank["events"]):
        plan[i % SESSIONS].append((f"event:{i}", said))
    sessions, where = [], {}
    date = bank["start"].replace(tzinfo=bank["tz"])
    for index, planted in enumerate(plan, 1):
        date = date + timedelta(days=rng.choice((5, 6, 7, 8, 9)), minutes=rng.choice((-40, 0, 25)))
        items = list(planted)
        rng.shuffle(items)
        user = [("greet", rng.choice(bank["greet"]))]
        for key, text in items:
            user.append((key, text))
            if rng.random() < 0.5:
                user.append(("", rng.choice(bank["small_user"])))
        while len(user) < 10:
            user.insert(rng.randrange(1, len(user) + 1), ("", rng.choice(bank["small_user"])))
        user.append(("bye", rng.choice(bank["bye"])))
        turns, at = [], date.timestamp()
        for n, (key, text) in enumerate(user):
            reply = (
                rng.choice(bank["agent_greet"]) if key == "greet"
                else rng.choice(bank["agent_bye"]) if key == "bye"
                else rng.choice(bank["agent_ack"])
            )  # fmt: skip
            for role, speaker, said in (("user", bank["user"], text), ("agent", "Holo", reply)):
                turn_id = f"{lang}-s{index:02d}-t{len(turns) + 1:02d}"
                turns.append(Turn(turn_id, speaker, said, role, at))
                at += TURN_GAP_S
                if role == "user" and key and key not in ("greet", "bye"):
                    where[key] = turn_id
            del n
        sessions.append(Session(index, date, tuple(turns)))
    probes: list[Probe] = []

    def add(category: str, question: str, evidence: list[str], answer: str, stale=()) -> None:
        pid = f"{lang}-p{len(probes) + 1:03d}"
        probes.append(Probe(pid, question, tuple(evidence), category, answer, tuple(stale)))

    for role, name, _, city, job in bank["people"]:
        add("single_fact", bank["q_name"].format(role=role), [where[f"name:{role}"]], name)
        add("multi_hop", bank["q_city"].format(role=role),
            [where[f"name:{role}"], where[f"city:{role}"]], city)  # fmt: skip
        add("multi_hop", bank["q_job"].format(role=role),
            [where[f"name:{role}"], where[f"job:{role}"]], job)  # fmt: skip
        add("single_fact", bank["q_city_name"].format(name=name), [where[f"city:{role}"]], city)
        add("single_fact", bank["q_job_name"].format(name=name), [where[f"job:{role}"]], job)
        add("multi_hop", bank["q_who_city"].format(city=city),
            [where[f"city:{role}"], where[f"name:{role}"]], f"{role} {name}")  # fmt: skip
        add("multi_hop", bank["q_who_job"].format(job=job),
            [where[f"job:{role}"], where[f"name:{role}"]], f"{role} {name}")  # fmt: skip
    for i, (_, question, answer) in enumerate(bank["facts"]):
        add("single_fact", question, [where[f"fact:{i}"]], answer)
    for i, (_, _, question, answer) in enumerate(bank["changes"]):
        add("preference_update", question, [where[f"new:{i}"]], answer, [where[f"old:{i}"]])
    session_of = {t.id: s for s in sessions for t in s.turns}
    for i, (what, _) in enumerate(bank["events"]):
        turn_id = where[f"event:{i}"]
        day = session_of[turn_id].date
        add("temporal", bank["q_when"].format(what=what), [turn_id], day.date().isoformat())
        add("temporal", bank["q_day"].format(day=bank["day"](day)), [turn_id], what)
    texts = [(t.id, t.text) for s in sessions for t in s.turns if t.role == "user"]
    for question, near in bank["adversarial"]:
        evidence = [i for i, text in texts if near in text][:2]
        if not evidence:
            raise ValueError(f"adversarial probe {question!r}: no turn mentions {near!r}")
        add("adversarial", question, evidence, "")
    speakers = (bank["user"], "Holo")
    return Conversation(f"companion_{lang}", lang, speakers, sessions, probes)


def main() -> None:
    for lang, bank, seed in (("en", EN, 11), ("zh", ZH, 12)):
        conversation = build(bank, lang, seed)
        write_project(conversation, HERE / f"companion_{lang}")
        counts: dict[str, int] = {}
        for probe in conversation.probes:
            counts[probe.category] = counts.get(probe.category, 0) + 1
        print(
            f"companion_{lang}: {conversation.turn_count} turns, "
            f"{len(conversation.sessions)} sessions, {len(conversation.probes)} probes {counts}"
        )


if __name__ == "__main__":
    main()
