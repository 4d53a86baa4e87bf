"""Word lists for the synthetic clinical corpus, written for this project.

Every list is split into a train part and a held-out part by split(); the
held-out part never reaches the vocabulary builder or the training loop, so
the reported figures measure how the models handle words they never saw.
"""

import random

import wordlists_more


_words = wordlists_more.words


FIRST_NAMES = _words("""
James
Mary
Robert
Patricia
Michael
Jennifer
William
Linda
David
Elizabeth
Richard
Barbara
Joseph
Susan
Thomas
Jessica
Charles
Sarah
Christopher
Karen
Daniel
Nancy
Matthew
Lisa
Anthony
Betty
Mark
Margaret
Donald
Sandra
Steven
Ashley
Paul
Kimberly
Andrew
Emily
Joshua
Donna
Kenneth
Michelle
Kevin
Dorothy
Brian
Carol
George
Amanda
Edward
Melissa
Ronald
Deborah
Timothy
Stephanie
Jason
Rebecca
Jeffrey
Laura
Ryan
Sharon
Jacob
Cynthia
Gary
Kathleen
Nicholas
Amy
Eric
Shirley
Jonathan
Angela
Stephen
Helen
Larry
Anna
Justin
Brenda
Scott
Pamela
Brandon
Nicole
Benjamin
Samantha
Samuel
Katherine
Gregory
Christine
Frank
Debra
Alexander
Rachel
Raymond
Catherine
Patrick
Carolyn
Jack
Janet
Dennis
Ruth
Jerry
Maria
Tyler
Heather
Aaron
Diane
José
Zoë
Łukasz
Renée
Chloé
Noémie
Søren
Björn
Jürgen
François
Inés
Raúl
Álvaro
Ángela
Mónica
Sebastián
Joaquín
Lucía
Begoña
Íñigo
Gaëlle
Hélène
Anaïs
Loïc
Maëlle
Zoltán
Dóra
Ágnes
Małgorzata
Wojciech
Paweł
Zofia
Jiří
Tomáš
Václav
Şükrü
Gülşen
Çağla
Oğuz
Dagný
Þórunn
Siobhán
Seán
Niamh
Aoife
Eoin
Saoirse
Oisín
Mohammed
Fatima
Ahmed
Aisha
Omar
Layla
Yusuf
Mariam
Hassan
Zainab
Priya
Rahul
Ananya
Arjun
Deepika
Vikram
Sunita
Rajesh
Kavya
Sanjay
Wei
Mei
Jun
Xiaoling
Hiroshi
Yuki
Haruto
Sakura
Kenji
Aiko
Min-jun
Seo-yeon
Ji-woo
Thanh
Linh
Quang
Chinedu
Ngozi
Oluwaseun
Adaeze
Kwame
Ama
Kofi
Abena
Tendai
Thandiwe
Sipho
Lerato
Mateo
Valentina
Santiago
Camila
Diego
Isabella
Luca
Giulia
Matteo
Chiara
Giovanni
Francesca
Dmitri
Olga
Sergei
Natalia
Ivan
Svetlana
Nikos
Eleni
Yannis
Sofia
Lars
Ingrid
Freya
Astrid
Magnus
Sigrid
Kai
Leilani
Keanu
Tala
Ayasha
Dakota
Aroha
Tane
Esperanza
Guadalupe
Rosario
Consuelo
""")

LAST_NAMES = _words("""
Smith
Johnson
Williams
Brown
Jones
Garcia
Miller
Davis
Rodriguez
Martinez
Hernandez
Lopez
Gonzalez
Wilson
Anderson
Thomas
Taylor
Moore
Jackson
Martin
Lee
Perez
Thompson
White
Harris
Sanchez
Clark
Ramirez
Lewis
Robinson
Walker
Young
Allen
King
Wright
Scott
Torres
Nguyen
Hill
Flores
Green
Adams
Nelson
Baker
Hall
Rivera
Campbell
Mitchell
Carter
Roberts
Phillips
Evans
Turner
Parker
Collins
Edwards
Stewart
Morris
Murphy
Cook
Rogers
Morgan
Peterson
Cooper
Reed
Bailey
Bell
Kelly
Howard
Ward
Cox
Richardson
Wood
Watson
Brooks
Bennett
Gray
Hughes
Price
Sanders
Myers
Long
Ross
Foster
Fitzgerald
O'Brien
O'Connor
McAllister
MacDonald
Müller
Schröder
Groß
Weiß
Köhler
Jäger
Fernández
Gómez
Jiménez
Muñoz
Álvarez
Martín
Sáez
Núñez
Peña
Ibáñez
Dubois
Lefèvre
Moreau
Girard
Rousseau
Bélanger
Côté
Gagné
Bouchard
Lévesque
Kowalski
Nowak
Wiśniewski
Wójcik
Kamiński
Lewandowski
Zieliński
Dvořák
Novák
Svoboda
Procházka
Kovács
Szabó
Tóth
Horváth
Yılmaz
Kaya
Demir
Şahin
Çelik
Öztürk
Jónsson
Sigurðsson
Guðmundsdóttir
Andersen
Nielsen
Hansen
Lindqvist
Johansson
Bergström
Sørensen
Haugen
Virtanen
Mäkinen
Korhonen
Rossi
Russo
Ferrari
Esposito
Bianchi
Romano
Colombo
Ricci
Papadopoulos
Georgiou
Ivanov
Petrov
Smirnov
Volkov
Kuznetsova
Patel
Sharma
Singh
Kumar
Gupta
Reddy
Iyer
Nair
Chatterjee
Banerjee
Khan
Hussain
Rahman
Ahmed
Haddad
Nasser
Khalil
Mansour
Cohen
Levi
Friedman
Goldberg
Wang
Li
Zhang
Liu
Chen
Yang
Huang
Zhao
Wu
Zhou
Tanaka
Suzuki
Takahashi
Watanabe
Yamamoto
Nakamura
Kobayashi
Kim
Park
Choi
Jung
Kang
Tran
Pham
Hoang
Okafor
Adeyemi
Okonkwo
Mensah
Boateng
Owusu
Ndlovu
Dlamini
Mokoena
Kamau
Otieno
Wanjiru
Silva
Santos
Oliveira
Souza
Pereira
Costa
Carvalho
Rocha
Almeida
Kealoha
Makoa
Begay
Yazzie
Tawhiri
Ngata
Van der Berg
De Vries
Van Dijk
Bakker
Janssen
""")

CITIES = _words("""
Springfield
Riverside
Fairview
Greenville
Madison
Georgetown
Salem
Franklin
Clinton
Arlington
Ashland
Burlington
Centerville
Dover
Hudson
Kingston
Lebanon
Milford
Newport
Oxford
Bristol
Chester
Dayton
Florence
Jackson
Lexington
Manchester
Marion
Milton
Mount Vernon
Oakland
Plymouth
Portland
Richmond
Shelbyville
Trenton
Winchester
Boston
Chicago
Houston
Phoenix
Philadelphia
San Antonio
San Diego
Dallas
Austin
Columbus
Charlotte
Indianapolis
Seattle
Denver
Nashville
Baltimore
Louisville
Milwaukee
Albuquerque
Tucson
Fresno
Sacramento
Mesa
Atlanta
Omaha
Raleigh
Miami
Tulsa
Minneapolis
Cleveland
Wichita
New Orleans
Bakersfield
Tampa
Honolulu
Anchorage
Pittsburgh
Cincinnati
Toledo
Buffalo
Lincoln
Orlando
Spokane
Boise
Des Moines
Montgomery
Birmingham
Little Rock
Santa Fe
Cheyenne
Bismarck
Pierre
Helena
Olympia
Juneau
Augusta
Concord
Montpelier
Hartford
Providence
Albany
Harrisburg
Annapolis
Charleston
Tallahassee
Baton Rouge
Jefferson City
Topeka
Saint Paul
Lansing
Springdale
Flagstaff
El Paso
Corpus Christi
Laredo
Brownsville
San José
Santa Bárbara
La Cañada
Española
Coeur d'Alène
Des Plaines
Terre Haute
Baie-Comeau
Montréal
Québec
Trois-Rivières
Toronto
Vancouver
Winnipeg
Halifax
Calgary
Edmonton
Ottawa
Saskatoon
London
Leeds
Glasgow
Edinburgh
Cardiff
Belfast
Dublin
Cork
Galway
München
Köln
Düsseldorf
Zürich
Genève
Malmö
Göteborg
Århus
Tromsø
Kraków
Łódź
Gdańsk
Poznań
Brno
Plzeň
São Paulo
Bogotá
Medellín
Mérida
León
Córdoba
Cádiz
Málaga
Logroño
Reykjavík
İzmir
Kayseri
Lagos
Accra
Nairobi
Kampala
Durban
Mumbai
Pune
Chennai
Kochi
Osaka
Sapporo
Busan
Daegu
Hanoi
Da Nang
Auckland
Rotorua
""")

STATES = _words("""
Alabama
Alaska
Arizona
Arkansas
California
Colorado
Connecticut
Delaware
Florida
Georgia
Hawaii
Idaho
Illinois
Indiana
Iowa
Kansas
Kentucky
Louisiana
Maine
Maryland
Massachusetts
Michigan
Minnesota
Mississippi
Missouri
Montana
Nebraska
Nevada
New Hampshire
New Jersey
New Mexico
New York
North Carolina
North Dakota
Ohio
Oklahoma
Oregon
Pennsylvania
Rhode Island
South Carolina
South Dakota
Tennessee
Texas
Utah
Vermont
Virginia
Washington
West Virginia
Wisconsin
Wyoming
AL
AK
AZ
AR
CA
CO
CT
DE
FL
GA
HI
ID
IL
IN
IA
KS
KY
LA
ME
MD
MA
MI
MN
MS
MO
MT
NE
NV
NH
NJ
NM
NY
NC
ND
OH
OK
OR
PA
RI
SC
SD
TN
TX
UT
VT
VA
WA
WV
WI
WY
Ontario
Quebec
Manitoba
Alberta
Nova Scotia
""")

STREET_NAMES = _words("""
Main
Oak
Maple
Cedar
Pine
Elm
Washington
Lake
Hill
Park
Sunset
Highland
Meadow
Forest
River
Church
Mill
Spring
Ridge
Valley
Willow
Birch
Chestnut
Walnut
Cherry
Magnolia
Dogwood
Sycamore
Hickory
Juniper
Laurel
Poplar
Aspen
Cypress
Harbor
Bayview
Lakeshore
Orchard
Prospect
Union
Liberty
Franklin
Jefferson
Lincoln
Madison
Monroe
Adams
Jackson
Kennedy
Roosevelt
Wilson
Grant
Hamilton
Mulberry
Hawthorne
Rosewood
Briarwood
Foxglove
Heather
Juniper Hollow
Quarry
Railroad
Canal
Market
Mission
Broadway
Central
College
School
Academy
Center
Front
High
King
Queen
Prince
Bridge
Water
Mountain
Summit
Glen
Brook
Creek
Falls
Shore
Beach
Ocean
Seaview
Pleasant
Greenwood
Fairway
Country Club
Old Farm
Stonegate
Whitehall
Kingsley
Ashford
Bramble
Thistle
Larkspur
Primrose
Camino Real
Rue Sainte-Catherine
Avenida Álvarez
Calle Ñandú
Königsallee
""")

STREET_TYPES = _words("""
Street
St
St.
Avenue
Ave
Ave.
Road
Rd
Rd.
Boulevard
Blvd
Lane
Ln
Drive
Dr
Court
Ct
Place
Pl
Way
Terrace
Circle
Parkway
Highway
Trail
""")

HOSPITAL_HEADS = _words("""
Saint Mary's
St. Luke's
St. Joseph's
Mercy
Providence
Good Samaritan
Sacred Heart
Holy Cross
Memorial
Presbyterian
Methodist
Baptist
Lutheran
Children's
Kaiser
Riverside
Lakeview
Northside
Southwest
Eastern
Valley
Summit
Pinecrest
Cedarbrook
Harborview
Bayfront
Hillcrest
Fairmont
Kingsbridge
Whitmore
Ashworth
Brightwater
Stonebridge
Evergreen
Silverlake
Redwood
Bluebonnet
Oakridge
Meadowbrook
Clearwater
""")

HOSPITAL_TAILS = _words("""
Hospital
Medical Center
General Hospital
Regional Medical Center
Community Hospital
Health System
Clinic
University Hospital
Health
Infirmary
Cancer Center
Heart Institute
Family Practice
Urgent Care
Rehabilitation Center
""")

CONDITIONS = _words("""
hypertension
type 2 diabetes mellitus
type 1 diabetes
diabetes
hyperlipidemia
hypercholesterolemia
coronary artery disease
atrial fibrillation
atrial flutter
congestive heart failure
heart failure with reduced ejection fraction
myocardial infarction
unstable angina
stable angina
cardiomyopathy
pericarditis
endocarditis
aortic stenosis
mitral regurgitation
peripheral arterial disease
deep vein thrombosis
pulmonary embolism
stroke
transient ischemic attack
intracerebral hemorrhage
subarachnoid hemorrhage
migraine
tension headache
epilepsy
seizure disorder
Parkinson's disease
Alzheimer's disease
dementia
multiple sclerosis
peripheral neuropathy
Bell's palsy
myasthenia gravis
asthma
chronic obstructive pulmonary disease
COPD
pneumonia
community-acquired pneumonia
bronchitis
bronchiectasis
pulmonary fibrosis
sarcoidosis
tuberculosis
COVID-19
influenza
obstructive sleep apnea
pleural effusion
pneumothorax
lung cancer
non-small cell lung cancer
breast cancer
prostate cancer
colon cancer
colorectal cancer
pancreatic cancer
ovarian cancer
cervical cancer
melanoma
basal cell carcinoma
squamous cell carcinoma
lymphoma
Hodgkin lymphoma
leukemia
chronic lymphocytic leukemia
acute myeloid leukemia
multiple myeloma
glioblastoma
renal cell carcinoma
hepatocellular carcinoma
gastroesophageal reflux disease
GERD
peptic ulcer disease
gastritis
Crohn's disease
ulcerative colitis
irritable bowel syndrome
celiac disease
diverticulitis
appendicitis
cholecystitis
cholelithiasis
pancreatitis
cirrhosis
hepatitis C
hepatitis B
fatty liver disease
small bowel obstruction
constipation
diarrhea
gastroenteritis
upper GI bleed
hemorrhoids
chronic kidney disease
acute kidney injury
end-stage renal disease
nephrolithiasis
kidney stones
urinary tract infection
UTI
pyelonephritis
benign prostatic hyperplasia
urinary incontinence
hypothyroidism
hyperthyroidism
Graves' disease
Hashimoto's thyroiditis
thyroid nodule
adrenal insufficiency
Cushing syndrome
obesity
metabolic syndrome
osteoporosis
osteoarthritis
rheumatoid arthritis
gout
lupus
systemic lupus erythematosus
psoriatic arthritis
ankylosing spondylitis
fibromyalgia
low back pain
sciatica
lumbar radiculopathy
carpal tunnel syndrome
rotator cuff tear
hip fracture
distal radius fracture
ankle sprain
cellulitis
abscess
sepsis
septic shock
bacteremia
osteomyelitis
herpes zoster
shingles
HIV
Lyme disease
iron deficiency anemia
anemia
sickle cell disease
thrombocytopenia
hemophilia
vitamin B12 deficiency
major depressive disorder
depression
generalized anxiety disorder
anxiety
bipolar disorder
schizophrenia
post-traumatic stress disorder
PTSD
ADHD
alcohol use disorder
opioid use disorder
insomnia
anorexia nervosa
eczema
atopic dermatitis
psoriasis
acne
urticaria
rosacea
glaucoma
cataract
macular degeneration
diabetic retinopathy
otitis media
sinusitis
pharyngitis
allergic rhinitis
tonsillitis
preeclampsia
gestational diabetes
endometriosis
polycystic ovary syndrome
chest pain
shortness of breath
dyspnea
palpitations
syncope
dizziness
vertigo
nausea
vomiting
abdominal pain
fever
chills
fatigue
weight loss
cough
hemoptysis
headache
edema
rash
pruritus
dysuria
hematuria
confusion
weakness
numbness
joint pain
back pain
""")

MEDICATIONS = _words("""
metformin
lisinopril
amlodipine
atorvastatin
simvastatin
rosuvastatin
pravastatin
losartan
valsartan
irbesartan
olmesartan
hydrochlorothiazide
chlorthalidone
furosemide
bumetanide
torsemide
spironolactone
eplerenone
metoprolol
metoprolol succinate
carvedilol
atenolol
bisoprolol
propranolol
diltiazem
verapamil
nifedipine
hydralazine
isosorbide mononitrate
nitroglycerin
digoxin
amiodarone
sotalol
apixaban
rivaroxaban
dabigatran
edoxaban
warfarin
heparin
enoxaparin
clopidogrel
ticagrelor
prasugrel
aspirin
insulin glargine
insulin lispro
insulin aspart
NPH insulin
glipizide
glimepiride
glyburide
sitagliptin
linagliptin
empagliflozin
dapagliflozin
canagliflozin
liraglutide
semaglutide
dulaglutide
pioglitazone
levothyroxine
methimazole
propylthiouracil
prednisone
prednisolone
methylprednisolone
dexamethasone
hydrocortisone
fludrocortisone
albuterol
levalbuterol
ipratropium
tiotropium
fluticasone
budesonide
mometasone
montelukast
salmeterol
formoterol
omeprazole
esomeprazole
pantoprazole
lansoprazole
famotidine
ondansetron
metoclopramide
prochlorperazine
loperamide
docusate
senna
polyethylene glycol
lactulose
mesalamine
infliximab
adalimumab
ustekinumab
vedolizumab
amoxicillin
amoxicillin-clavulanate
azithromycin
clarithromycin
doxycycline
cephalexin
cefazolin
ceftriaxone
cefepime
ciprofloxacin
levofloxacin
moxifloxacin
trimethoprim-sulfamethoxazole
nitrofurantoin
metronidazole
clindamycin
vancomycin
linezolid
piperacillin-tazobactam
meropenem
gentamicin
acyclovir
valacyclovir
oseltamivir
fluconazole
nystatin
sertraline
fluoxetine
citalopram
escitalopram
paroxetine
venlafaxine
duloxetine
bupropion
mirtazapine
trazodone
amitriptyline
nortriptyline
lithium
lamotrigine
valproate
quetiapine
olanzapine
risperidone
aripiprazole
haloperidol
lorazepam
alprazolam
clonazepam
diazepam
zolpidem
melatonin
gabapentin
pregabalin
levetiracetam
carbamazepine
phenytoin
topiramate
sumatriptan
donepezil
memantine
carbidopa-levodopa
pramipexole
ropinirole
baclofen
cyclobenzaprine
tizanidine
acetaminophen
ibuprofen
naproxen
celecoxib
meloxicam
diclofenac
ketorolac
tramadol
oxycodone
hydrocodone
morphine
hydromorphone
fentanyl
buprenorphine
naloxone
methadone
allopurinol
colchicine
febuxostat
alendronate
zoledronic acid
denosumab
calcium carbonate
vitamin D3
cholecalciferol
ferrous sulfate
folic acid
cyanocobalamin
potassium chloride
magnesium oxide
tamsulosin
finasteride
oxybutynin
sildenafil
methotrexate
hydroxychloroquine
sulfasalazine
tacrolimus
mycophenolate
cyclosporine
tamoxifen
letrozole
anastrozole
cisplatin
carboplatin
paclitaxel
doxorubicin
pembrolizumab
nivolumab
trastuzumab
rituximab
epoetin alfa
filgrastim
cetirizine
loratadine
diphenhydramine
hydroxyzine
epinephrine
Lipitor
Eliquis
Xarelto
Lasix
Coumadin
Plavix
Zoloft
Prozac
Lexapro
Synthroid
Glucophage
Norvasc
Zestril
Toprol XL
Protonix
Nexium
Ventolin
Advair
Symbicort
Januvia
Jardiance
Ozempic
Humira
Keppra
Neurontin
Tylenol
Advil
Motrin
Percocet
Augmentin
Zithromax
Cipro
Keflex
Flagyl
Seroquel
Xanax
Ativan
Ambien
""")

PROCEDURES = _words("""
colonoscopy
upper endoscopy
EGD
bronchoscopy
cystoscopy
laparoscopic cholecystectomy
cholecystectomy
appendectomy
laparoscopic appendectomy
total knee arthroplasty
total hip arthroplasty
knee replacement
hip replacement
arthroscopy
rotator cuff repair
ACL reconstruction
spinal fusion
lumbar laminectomy
discectomy
carpal tunnel release
open reduction and internal fixation
ORIF
coronary artery bypass grafting
CABG
percutaneous coronary intervention
PCI
cardiac catheterization
coronary angiography
pacemaker placement
ICD implantation
cardioversion
catheter ablation
valve replacement
transcatheter aortic valve replacement
TAVR
carotid endarterectomy
hemodialysis
peritoneal dialysis
kidney transplant
liver transplant
lumbar puncture
thoracentesis
paracentesis
bone marrow biopsy
skin biopsy
liver biopsy
breast biopsy
fine needle aspiration
mastectomy
lumpectomy
hysterectomy
cesarean section
C-section
tubal ligation
dilation and curettage
prostatectomy
TURP
nephrectomy
thyroidectomy
parathyroidectomy
tonsillectomy
adenoidectomy
septoplasty
cataract surgery
LASIK
hernia repair
inguinal hernia repair
bowel resection
colectomy
Whipple procedure
gastric bypass
sleeve gastrectomy
tracheostomy
intubation
mechanical ventilation
central line placement
PICC line placement
blood transfusion
chemotherapy
radiation therapy
immunotherapy
physical therapy
occupational therapy
cognitive behavioral therapy
electroconvulsive therapy
wound debridement
incision and drainage
amputation
skin graft
epidural steroid injection
nerve block
vaccination
stress test
""")

ANATOMY = _words("""
left lower lobe
right upper lobe
right middle lobe
left ventricle
right ventricle
left atrium
aortic valve
mitral valve
coronary arteries
left anterior descending artery
carotid artery
femoral artery
jugular vein
abdomen
right lower quadrant
left upper quadrant
epigastrium
liver
gallbladder
pancreas
spleen
stomach
duodenum
small bowel
colon
sigmoid colon
rectum
esophagus
kidney
left kidney
right kidney
bladder
ureter
urethra
prostate
uterus
ovary
cervix
breast
axilla
thyroid
lymph nodes
cervical lymph nodes
brain
frontal lobe
temporal lobe
cerebellum
spinal cord
lumbar spine
cervical spine
thoracic spine
sacrum
pelvis
left hip
right hip
left knee
right knee
ankle
left ankle
foot
heel
shoulder
right shoulder
elbow
wrist
left wrist
hand
fingers
femur
tibia
fibula
humerus
radius
ulna
clavicle
ribs
sternum
skull
chest
chest wall
lungs
heart
trachea
larynx
pharynx
tonsils
sinuses
nasal septum
retina
cornea
eye
ear
tympanic membrane
skin
scalp
neck
groin
forearm
calf
""")

TESTS = _words("""
complete blood count
CBC
basic metabolic panel
BMP
comprehensive metabolic panel
CMP
hemoglobin
hemoglobin A1c
HbA1c
hematocrit
white blood cell count
WBC
platelet count
sodium
potassium
chloride
bicarbonate
BUN
creatinine
eGFR
glucose
fasting glucose
calcium
magnesium
phosphorus
albumin
total bilirubin
ALT
AST
alkaline phosphatase
lipase
amylase
troponin
troponin I
BNP
NT-proBNP
D-dimer
INR
PT
PTT
TSH
free T4
lipid panel
LDL
HDL
triglycerides
total cholesterol
CRP
C-reactive protein
ESR
procalcitonin
lactate
ferritin
iron studies
vitamin B12
vitamin D level
PSA
urinalysis
urine culture
blood cultures
sputum culture
COVID-19 PCR
rapid strep test
HIV test
hepatitis panel
ECG
EKG
electrocardiogram
echocardiogram
chest X-ray
chest radiograph
CT scan
CT of the abdomen
CT head
MRI
MRI of the brain
MRI lumbar spine
ultrasound
abdominal ultrasound
renal ultrasound
Doppler ultrasound
mammogram
DEXA scan
PET scan
pulmonary function tests
spirometry
EEG
EMG
Holter monitor
arterial blood gas
blood pressure
heart rate
oxygen saturation
SpO2
temperature
respiratory rate
BMI
""")

UNITS_MASS = _words("""
mg
mcg
g
units
mg/kg
mL
""")

ROUTES = _words("""
PO
by mouth
orally
IV
intravenously
IM
intramuscularly
SC
subcutaneously
subcut
SQ
SL
sublingually
topically
inhaled
via nebulizer
PR
per rectum
transdermal
intranasally
via NG tube
ophthalmic
""")

FREQUENCIES = _words("""
daily
once daily
twice daily
three times daily
four times daily
every morning
every evening
at bedtime
nightly
BID
TID
QID
QD
QHS
q.d.
b.i.d.
t.i.d.
q4h
q6h
q8h
q12h
every 4 hours
every 6 hours
every 8 hours
every 12 hours
every 4 to 6 hours
as needed
PRN
q6h PRN
weekly
once weekly
every other day
monthly
every 2 weeks
before meals
with meals
once
stat
""")


def split(items, seed, heldout_share=0.25):
    """Returns (train, heldout): a fixed, seeded, disjoint split of items.

    Duplicates are removed first so a word cannot sit on both sides.
    """
    uniq = sorted(set(items))
    rng = random.Random(seed)
    rng.shuffle(uniq)
    n_held = max(1, int(round(len(uniq) * heldout_share)))
    return uniq[n_held:], uniq[:n_held]


LISTS = {
    "FIRST": FIRST_NAMES,
    "LAST": LAST_NAMES,
    "CITY": CITIES,
    "STATE": STATES,
    "STREET_NAME": STREET_NAMES,
    "STREET_TYPE": STREET_TYPES,
    "HOSP_HEAD": HOSPITAL_HEADS,
    "HOSP_TAIL": HOSPITAL_TAILS,
    "COND": CONDITIONS,
    "MED": MEDICATIONS,
    "PROC": PROCEDURES,
    "ANAT": ANATOMY,
    "TEST": TESTS,
    "ROUTE": ROUTES,
    "FREQ": FREQUENCIES,
    "UNIT": UNITS_MASS,
}


# Closed classes (PO, BID, mg, Street...): every user expects the common forms, so a
# held-out part would only remove them from training; split_all keeps them on both sides, and
# the cards say so.
CLOSED = ("STREET_TYPE", "UNIT", "HOSP_TAIL", "ROUTE", "FREQ")


def split_all(seed=1234, editions=None):
    """Returns {"train": {name: list}, "heldout": {name: list}} from the first `editions`
    editions (1: the split the first models were measured on; None: all of them)."""
    eds = ([LISTS] + wordlists_more.EDITIONS)[:editions]
    out = {"train": {}, "heldout": {}}
    for i, (name, items) in enumerate(sorted(LISTS.items())):
        share = 0.25
        if name in CLOSED:
            out["train"][name] = sorted(set(items))
            out["heldout"][name] = sorted(set(items))
            continue
        # Each edition is split on its own, so every word of an earlier edition keeps
        # its side (its held-out words stay unseen) and no word is on both sides.
        train, held, known = [], [], set()
        for e, lists in enumerate(eds):
            new = [w for w in lists.get(name, []) if w.lower() not in known]
            if not new:
                continue
            tr, ho = split(new, seed + 100 * e + i, share)
            train, held = train + tr, held + ho
            known |= {w.lower() for w in new}
        out["train"][name] = train
        out["heldout"][name] = held
    return out
